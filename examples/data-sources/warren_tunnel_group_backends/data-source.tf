# Backend lists take no filter.
data "warren_tunnel_group_backends" "all" {}
