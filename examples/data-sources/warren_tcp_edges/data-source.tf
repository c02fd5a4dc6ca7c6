# Edge lists take no filter.
data "warren_tcp_edges" "all" {}
