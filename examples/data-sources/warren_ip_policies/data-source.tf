data "warren_ip_policies" "all" {}
