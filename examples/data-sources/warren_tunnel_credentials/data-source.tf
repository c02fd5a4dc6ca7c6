# Credentials allowed to bind anything under example.com.
data "warren_tunnel_credentials" "example" {
  filter = "\"bind:*.example.com\" in obj.acl"
}
