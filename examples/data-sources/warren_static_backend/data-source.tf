data "warren_static_backend" "example" {
  id = "bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
