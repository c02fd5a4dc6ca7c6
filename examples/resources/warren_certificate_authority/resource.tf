# A CA whose certificate verifies client certificates in mutual TLS.
resource "warren_certificate_authority" "clients" {
  description = "client certificates"
  ca_pem      = file("${path.module}/clients-ca.pem")
}
