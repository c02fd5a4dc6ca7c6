# Domains that serve an uploaded certificate.
data "warren_reserved_domains" "uploaded" {
  filter = "obj.certificate.id != null"
}
