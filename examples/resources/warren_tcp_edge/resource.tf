resource "warren_reserved_addr" "ssh" {
  description = "bastion"
}

resource "warren_tunnel_group_backend" "bastion" {
  labels = { app = "bastion" }
}

resource "warren_ip_policy" "office" {
  description = "office"
}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  action       = "allow"
  cidr         = "198.51.100.0/24"
}

resource "warren_tcp_edge" "ssh" {
  description = "SSH to the bastion"
  hostports   = [warren_reserved_addr.ssh.addr]

  backend = {
    backend_id = warren_tunnel_group_backend.bastion.id
  }

  ip_restriction = {
    ip_policy_ids = [warren_ip_policy.office.id]
  }

  # JSON or YAML; reformatting the document is no change.
  traffic_policy = {
    value = jsonencode({
      on_tcp_connect = [{
        expressions = ["conn.client_ip == '203.0.113.7'"]
        actions     = [{ type = "deny" }]
      }]
    })
  }
}
