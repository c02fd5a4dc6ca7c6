resource "warren_reserved_domain" "db" {
  domain = "db.example.com"
}

resource "warren_static_backend" "db" {
  address = "10.0.0.10:5432"
}

# TLS passed through to the database, which holds the certificate.
resource "warren_tls_edge" "db" {
  hostports = ["${warren_reserved_domain.db.domain}:443"]

  backend = {
    backend_id = warren_static_backend.db.id
  }

  tls_termination = {
    terminate_at = "upstream"
  }
}

resource "warren_certificate_authority" "clients" {
  ca_pem = file("${path.module}/clients-ca.pem")
}

resource "warren_reserved_domain" "mqtt" {
  domain = "mqtt.example.com"
}

# TLS ended at the edge, clients authenticated by their certificates.
resource "warren_tls_edge" "mqtt" {
  hostports = ["${warren_reserved_domain.mqtt.domain}:443"]

  backend = {
    backend_id = warren_static_backend.db.id
  }

  tls_termination = {
    min_version = "1.3"
  }

  mutual_tls = {
    certificate_authority_ids = [warren_certificate_authority.clients.id]
  }
}
