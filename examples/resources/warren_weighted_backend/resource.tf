resource "warren_tunnel_group_backend" "agents" {
  labels = { app = "shop" }
}

resource "warren_static_backend" "legacy" {
  address = "10.1.2.3:8080"
}

# 90% to the agents, 10% to the legacy server.
resource "warren_weighted_backend" "canary" {
  backends = {
    (warren_tunnel_group_backend.agents.id) = 90
    (warren_static_backend.legacy.id)       = 10
  }
}
