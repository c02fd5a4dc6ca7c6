data "warren_ip_restrictions" "all" {}
