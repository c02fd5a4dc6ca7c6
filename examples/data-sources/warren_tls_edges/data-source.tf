# Edge lists take no filter.
data "warren_tls_edges" "all" {}
