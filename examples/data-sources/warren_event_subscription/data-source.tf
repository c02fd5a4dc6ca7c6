data "warren_event_subscription" "audit" {
  id = "esb_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
