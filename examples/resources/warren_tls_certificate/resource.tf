# With the key kept in state as a sensitive value:
resource "warren_tls_certificate" "app" {
  description     = "app.example.com"
  certificate_pem = file("${path.module}/app.example.com.chain.pem")
  private_key_pem = file("${path.module}/app.example.com.key.pem")
}

# With a write-only key (Terraform 1.11+): sent once, never stored in plan or state.
# Bump private_key_pem_wo_version to upload a new key (which makes a new certificate).
resource "warren_tls_certificate" "api" {
  description                = "api.example.com"
  certificate_pem            = file("${path.module}/api.example.com.chain.pem")
  private_key_pem_wo         = file("${path.module}/api.example.com.key.pem")
  private_key_pem_wo_version = 1
}

# Served by a reserved domain, and rotated in one apply: replace the PEM files and apply.
# The server refuses to delete a certificate a domain uses (ERR_1966), so the new
# certificate is created first, the domain switches to it in place, and the old one is
# deleted last.
resource "warren_tls_certificate" "shop" {
  description     = "shop.example.com"
  certificate_pem = file("${path.module}/shop.example.com.chain.pem")
  private_key_pem = file("${path.module}/shop.example.com.key.pem")

  lifecycle {
    create_before_destroy = true
  }
}

resource "warren_reserved_domain" "shop" {
  domain         = "shop.example.com"
  certificate_id = warren_tls_certificate.shop.id
}
