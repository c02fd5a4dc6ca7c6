# The deny rules of one policy.
data "warren_ip_policy_rules" "denied" {
  filter = "obj.ip_policy == \"ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue\" && obj.action == \"deny\""
}
