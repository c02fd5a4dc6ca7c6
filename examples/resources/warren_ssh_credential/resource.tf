# An SSH public key that may start tunnel sessions.
resource "warren_ssh_credential" "laptop" {
  description = "laptop"
  public_key  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINmAHSedIcgBVZ39gTGFbJW3QcOsLfKI4LHau2zUAERc demo@warren"
  acl         = ["bind:dev.example.com"]
}
