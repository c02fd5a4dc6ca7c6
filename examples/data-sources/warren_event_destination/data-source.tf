data "warren_event_destination" "audit" {
  id = "ed_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
