# The server generates the key pair and keeps the private key.
resource "warren_ssh_certificate_authority" "hosts" {
  description      = "host certificates"
  private_key_type = "ecdsa"
  elliptic_curve   = "p384"
}

resource "warren_ssh_certificate_authority" "legacy" {
  description      = "for old clients"
  private_key_type = "rsa"
  key_size         = 4096
}
