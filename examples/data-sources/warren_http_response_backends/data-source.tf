# Backend lists take no filter.
data "warren_http_response_backends" "all" {}
