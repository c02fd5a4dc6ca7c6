data "warren_event_destinations" "all" {}

data "warren_event_destinations" "audit" {
  filter = "obj.description == \"audit trail\""
}
