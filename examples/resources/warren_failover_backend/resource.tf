resource "warren_tunnel_group_backend" "agents" {
  labels = { app = "shop" }
}

resource "warren_http_response_backend" "maintenance" {
  status_code = 503
  body        = "Back soon."
}

# The agents while they are up, the maintenance page otherwise.
resource "warren_failover_backend" "shop" {
  backends = [
    warren_tunnel_group_backend.agents.id,
    warren_http_response_backend.maintenance.id,
  ]
}
