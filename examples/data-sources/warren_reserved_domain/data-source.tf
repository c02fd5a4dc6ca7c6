# By domain (or by id).
data "warren_reserved_domain" "app" {
  domain = "app.example.com"
}
