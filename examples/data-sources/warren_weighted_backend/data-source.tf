data "warren_weighted_backend" "example" {
  id = "bkdwd_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
