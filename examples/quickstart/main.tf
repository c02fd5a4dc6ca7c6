# The quickstart: one object of each kind, wired together where the API allows.
# Run it with `make demo`, or against your own server with WARREN_API_URL and WARREN_API_KEY set.

terraform {
  required_providers {
    warren = {
      source = "warrenhq/warren"
    }
  }
}

provider "warren" {}

# A service user for automation, and an API key that acts as it.
resource "warren_service_user" "ci" {
  name = "ci-deployer"
}

resource "warren_api_key" "ci" {
  description = "CI pipeline"
  owner_id    = warren_service_user.ci.id
}

# An authtoken for agents that may only bind hosts under example.com.
resource "warren_tunnel_credential" "agents" {
  description = "edge agents"
  acl         = ["bind:*.example.com"]
}

# An SSH key that may start tunnel sessions.
resource "warren_ssh_credential" "laptop" {
  description = "laptop key"
  public_key  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINmAHSedIcgBVZ39gTGFbJW3QcOsLfKI4LHau2zUAERc demo@warren"
}

# A certificate authority for SSH host and user certificates; the server keeps the private key.
resource "warren_ssh_certificate_authority" "hosts" {
  description      = "host certificates"
  private_key_type = "ed25519"
}
