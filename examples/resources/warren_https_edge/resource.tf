resource "warren_reserved_domain" "shop" {
  domain = "shop.example.com"
}

resource "warren_certificate_authority" "clients" {
  ca_pem = file("clients-ca.pem")
}

# HTTPS on shop.example.com; clients must present a certificate signed by the CA.
resource "warren_https_edge" "shop" {
  description = "shop"
  hostports   = ["${warren_reserved_domain.shop.domain}:443"]

  mutual_tls = {
    certificate_authority_ids = [warren_certificate_authority.clients.id]
  }

  tls_termination = {
    min_version = "1.2"
  }
}

# The IDs of the edge's routes (warren_https_edge_route), as of the last refresh.
output "shop_routes" {
  value = warren_https_edge.shop.routes
}
