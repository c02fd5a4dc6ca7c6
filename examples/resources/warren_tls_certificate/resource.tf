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
