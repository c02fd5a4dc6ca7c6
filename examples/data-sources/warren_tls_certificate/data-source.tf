data "warren_tls_certificate" "app" {
  id = "cert_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}

output "app_certificate_expires" {
  value = data.warren_tls_certificate.app.not_after
}
