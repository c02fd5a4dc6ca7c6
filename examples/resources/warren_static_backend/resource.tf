resource "warren_static_backend" "legacy" {
  description = "legacy app server"
  address     = "10.1.2.3:8443"
  tls         = { enabled = true }
}
