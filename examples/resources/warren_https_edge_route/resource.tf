resource "warren_tunnel_group_backend" "api" {
  labels = { app = "shop-api" }
}

resource "warren_ip_policy" "office" {
  description = "office"
}

# /api: the agents behind a circuit breaker, from the office only, with a header added.
resource "warren_https_edge_route" "api" {
  edge_id    = warren_https_edge.shop.id
  match_type = "path_prefix"
  match      = "/api"

  backend         = { backend_id = warren_tunnel_group_backend.api.id }
  ip_restriction  = { ip_policy_ids = [warren_ip_policy.office.id] }
  circuit_breaker = { error_threshold_percentage = 0.5 }
  compression     = {}
  request_headers = {
    add    = { "x-served-by" = "warren" }
    remove = ["x-debug"]
  }
}

# /admin: sign-in with OpenID Connect; the client secret is write-only (Terraform 1.11+),
# so it reaches the server but never the state. Bump the version to send a new one.
variable "oidc_client_secret" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "warren_https_edge_route" "admin" {
  edge_id    = warren_https_edge.shop.id
  match_type = "path_prefix"
  match      = "/admin"

  backend = { backend_id = warren_tunnel_group_backend.api.id }
  oidc = {
    issuer                   = "https://login.example.com"
    client_id                = "shop-admin"
    client_secret_wo         = var.oidc_client_secret
    client_secret_wo_version = 1
    scopes                   = ["openid", "email"]
  }
}

# /hooks/github: only requests signed by GitHub, and a traffic policy.
resource "warren_https_edge_route" "hooks" {
  edge_id    = warren_https_edge.shop.id
  match_type = "exact_path"
  match      = "/hooks/github"

  backend = { backend_id = warren_tunnel_group_backend.api.id }
  webhook_verification = {
    provider = "github"
    secret   = var.github_webhook_secret
  }
  traffic_policy = {
    value = jsonencode({
      on_http_request = [{
        expressions = ["req.method != 'POST'"]
        actions     = [{ type = "deny" }]
      }]
    })
  }
}

variable "github_webhook_secret" {
  type      = string
  sensitive = true
}
