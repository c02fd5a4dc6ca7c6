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

# An authtoken for agents that may only bind hosts under example.com, or join the shop's
# tunnel group (label app=shop). `make demo` starts a warren-agent with it.
resource "warren_tunnel_credential" "agents" {
  description = "edge agents"
  acl         = ["bind:*.example.com", "bind:app=shop"]
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

# A domain you bring, served with a certificate you upload (`make demo` makes one with
# openssl; leave certificate_id out and the service will manage the certificate once ACME
# lands). Point a CNAME at cname_target, or, on your own machine, resolve the name to the
# edge (curl --resolve app.example.com:8443:127.0.0.1).
variable "app_certificate_pem" {
  type = string
}

variable "app_private_key_pem" {
  type      = string
  sensitive = true
}

resource "warren_tls_certificate" "app" {
  description        = "app.example.com"
  certificate_pem    = var.app_certificate_pem
  private_key_pem_wo = var.app_private_key_pem
  # Change the version to upload a new key with a new certificate.
  private_key_pem_wo_version = 1
}

resource "warren_reserved_domain" "app" {
  domain         = "app.example.com"
  description    = "quickstart app"
  certificate_id = warren_tls_certificate.app.id
}

# A TCP address for a TCP edge; the server assigns host and port.
resource "warren_reserved_addr" "ssh" {
  description = "ssh bastion"
}

# An API IP restriction for the office network and this machine, staged: with enforced = false
# the server logs each request it would refuse (403 ERR_220) instead of refusing it. Set
# enforced = true once the logs are quiet; the server refuses a change that would lock out
# the address making it.
resource "warren_ip_policy" "office" {
  description = "office network"
}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

resource "warren_ip_policy_rule" "local" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "127.0.0.0/8"
  action       = "allow"
  description  = "the machine running this quickstart"
}

resource "warren_ip_restriction" "api" {
  type          = "api"
  ip_policy_ids = [warren_ip_policy.office.id]
  depends_on    = [warren_ip_policy_rule.office, warren_ip_policy_rule.local]
}

# Traffic for the shop: the agents labelled app=shop first (warren-agent --label app=shop);
# when none is online, a canary split (90% to those agents, 10% to a legacy server), and a
# maintenance page when nothing answers. The legacy server is on a private network: the edge
# refuses to dial private addresses unless the operator allows them
# (--edge-allow-private-backends), so that a backend is never a way into the server's network.
resource "warren_tunnel_group_backend" "agents" {
  labels = { app = "shop" }
}

resource "warren_static_backend" "legacy" {
  address = "10.1.2.3:8080"
}

resource "warren_weighted_backend" "canary" {
  backends = {
    (warren_tunnel_group_backend.agents.id) = 90
    (warren_static_backend.legacy.id)       = 10
  }
}

resource "warren_http_response_backend" "maintenance" {
  status_code = 503
  body        = "Back soon."
}

resource "warren_failover_backend" "shop" {
  backends = [
    warren_tunnel_group_backend.agents.id,
    warren_weighted_backend.canary.id,
    warren_http_response_backend.maintenance.id,
  ]
}

# /admin only from the office network: `make demo` asks from this machine and is refused.
resource "warren_ip_policy" "office_only" {
  description = "office network only"
}

resource "warren_ip_policy_rule" "office_only" {
  ip_policy_id = warren_ip_policy.office_only.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

# The shop on its domain: an HTTPS edge (TLS ends at the edge, 1.2 at least) with two routes
# (exact matches first, then the longest prefix). Everything under / goes to the failover
# backend, with a header telling the app where it came from; /admin goes to the legacy
# server, and only from the office network.
resource "warren_https_edge" "app" {
  description     = "shop"
  hostports       = ["${warren_reserved_domain.app.domain}:443"]
  tls_termination = { min_version = "1.2" }
}

resource "warren_https_edge_route" "shop" {
  edge_id    = warren_https_edge.app.id
  match_type = "path_prefix"
  match      = "/"
  backend    = { backend_id = warren_failover_backend.shop.id }
  request_headers = {
    add = { "x-served-by" = "warren-quickstart" }
  }
}

resource "warren_https_edge_route" "admin" {
  edge_id        = warren_https_edge.app.id
  match_type     = "path_prefix"
  match          = "/admin"
  backend        = { backend_id = warren_static_backend.legacy.id }
  ip_restriction = { ip_policy_ids = [warren_ip_policy.office_only.id] }
  response_headers = {
    add = { "cache-control" = "no-store" }
  }
  depends_on = [warren_ip_policy_rule.office_only]
}

# /account is for signed-in users: a visitor without a session is sent to GitHub to sign in,
# and comes back to https://app.example.com/_warren/auth/callback. Without a client_id the
# route uses the server's managed GitHub app (`make demo` starts the server with one,
# --oauth-github-client-id); with your own app, set client_id and client_secret and register
# that callback URL with it.
resource "warren_https_edge_route" "account" {
  edge_id    = warren_https_edge.app.id
  match_type = "path_prefix"
  match      = "/account"
  backend    = { backend_id = warren_failover_backend.shop.id }
  oauth = {
    provider = {
      github = { email_domains = ["example.com"] }
    }
  }
}

# Audit events of this account go to an observability service's logs intake. `make demo`
# points the server at examples/event-sink, a local intake that prints them; against your own
# server they go to the site's intake, so set observability_api_key to your own key. The key
# is write-only: it reaches the server, never the state.
variable "observability_api_key" {
  type      = string
  sensitive = true
  default   = "quickstart-demo-key"
}

resource "warren_event_destination" "audit" {
  description = "quickstart audit trail"
  format      = "JSON"
  target = {
    observability = {
      api_key_wo         = var.observability_api_key
      api_key_wo_version = 1
      service            = "warren"
      tags               = "env:quickstart"
      site               = "datadoghq.com"
    }
  }
}

# Who changes access: subscription, IP policy and API key events. The subscription's own
# creation is the first event it delivers.
resource "warren_event_subscription" "audit" {
  description = "access changes"
  sources = [
    "event_subscription_created.v0",
    "ip_policy_created.v0",
    "ip_policy_updated.v0",
    "ip_policy_deleted.v0",
    "api_key_created.v0",
    "api_key_deleted.v0",
  ]
  destination_ids = [warren_event_destination.audit.id]
}
