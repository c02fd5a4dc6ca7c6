# An authtoken that exists only for the duration of the run, e.g. to hand to a provisioner.
ephemeral "warren_tunnel_credential" "run" {
  description = "one-off agent"
  acl         = ["bind:ci.example.com"]
}
