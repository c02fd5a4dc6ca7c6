resource "warren_event_destination" "audit" {
  format = "JSON"
  target = {
    log_group = {
      log_group_arn = "arn:aws:logs:eu-west-1:123456789012:log-group:warren-audit"
      auth = {
        role = { role_arn = "arn:aws:iam::123456789012:role/warren-events" }
      }
    }
  }
}

# Every change to IP policies and API keys goes to the audit log group.
resource "warren_event_subscription" "audit" {
  description = "access changes"
  sources = [
    "ip_policy_created.v0",
    "ip_policy_updated.v0",
    "ip_policy_deleted.v0",
    "api_key_created.v0",
    "api_key_deleted.v0",
  ]
  destination_ids = [warren_event_destination.audit.id]
}
