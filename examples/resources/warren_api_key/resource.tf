resource "warren_service_user" "ci" {
  name = "ci"
}

# An API key that acts as the CI service user. Its token is shown only once, at creation,
# and kept in state as a sensitive value.
resource "warren_api_key" "ci" {
  description = "CI pipeline"
  metadata    = jsonencode({ team = "platform" })
  owner_id    = warren_service_user.ci.id
}

output "ci_api_key_token" {
  value     = warren_api_key.ci.token
  sensitive = true
}
