resource "warren_ip_policy" "office" {}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

# Only the office may use the API.
resource "warren_ip_restriction" "api" {
  type          = "api"
  enforced      = true
  ip_policy_ids = [warren_ip_policy.office.id]
}
