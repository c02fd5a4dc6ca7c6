resource "warren_http_response_backend" "maintenance" {
  status_code = 503
  body        = "Back soon."
  headers = {
    "Content-Type" = "text/plain"
    "Retry-After"  = "600"
  }
}
