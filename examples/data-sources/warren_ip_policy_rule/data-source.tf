data "warren_ip_policy_rule" "vpn" {
  id = "ipr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
