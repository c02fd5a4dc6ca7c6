data "warren_https_edges" "all" {}
