# An authtoken for agents. The ACL limits what the agents may bind.
resource "warren_tunnel_credential" "edge" {
  description = "edge agents"
  acl = [
    "bind:*.example.com",
    "bind:env=prod",
  ]
}
