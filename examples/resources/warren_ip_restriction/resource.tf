resource "warren_ip_policy" "office" {}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

# Only the office may use the API. Staged first: with enforced = false the server logs the
# requests it would refuse. Set enforced = true from an office address; the server refuses
# (400 ERR_220) a change that would lock out the address making it.
resource "warren_ip_restriction" "api" {
  type          = "api"
  enforced      = false
  ip_policy_ids = [warren_ip_policy.office.id]

  # The allow rule exists before the restriction and outlives it on destroy.
  depends_on = [warren_ip_policy_rule.office]
}
