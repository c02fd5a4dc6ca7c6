# Backend lists take no filter.
data "warren_static_backends" "all" {}
