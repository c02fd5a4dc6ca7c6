# Backend lists take no filter.
data "warren_failover_backends" "all" {}
