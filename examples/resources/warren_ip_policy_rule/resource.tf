resource "warren_ip_policy" "office" {
  description = "office and VPN"
}

resource "warren_ip_policy_rule" "vpn" {
  ip_policy_id = warren_ip_policy.office.id
  description  = "VPN egress"
  cidr         = "203.0.113.0/24"
  action       = "allow"
}

resource "warren_ip_policy_rule" "blocked" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "203.0.113.128/25"
  action       = "deny"
}
