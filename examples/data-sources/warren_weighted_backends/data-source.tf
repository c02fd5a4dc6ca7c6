# Backend lists take no filter.
data "warren_weighted_backends" "all" {}
