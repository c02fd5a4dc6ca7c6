# A domain you bring, with a certificate the service obtains and renews. Point a CNAME
# record for the domain at cname_target.
resource "warren_reserved_domain" "app" {
  domain      = "app.example.com"
  description = "customer app"
  certificate_management_policy = {
    private_key_type = "ecdsa"
  }
}

output "app_cname_target" {
  value = warren_reserved_domain.app.cname_target
}

# A domain served with a certificate you upload.
resource "warren_tls_certificate" "api" {
  certificate_pem = file("${path.module}/api.example.com.chain.pem")
  private_key_pem = file("${path.module}/api.example.com.key.pem")
}

resource "warren_reserved_domain" "api" {
  domain         = "api.example.com"
  certificate_id = warren_tls_certificate.api.id
  resolves_to    = ["eu", "us"]
}
