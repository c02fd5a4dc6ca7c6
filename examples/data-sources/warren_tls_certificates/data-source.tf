# Certificates that expire within 30 days.
data "warren_tls_certificates" "expiring" {
  filter = "obj.not_after < timestamp(time.now).add(\"30d\")"
}
