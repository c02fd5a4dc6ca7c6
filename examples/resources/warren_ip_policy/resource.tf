resource "warren_ip_policy" "office" {
  description = "office and VPN"
}
