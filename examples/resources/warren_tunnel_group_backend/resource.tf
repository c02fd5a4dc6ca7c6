# Traffic goes to the agent tunnels labelled app=shop, env=prod.
resource "warren_tunnel_group_backend" "shop" {
  labels = {
    app = "shop"
    env = "prod"
  }
}
