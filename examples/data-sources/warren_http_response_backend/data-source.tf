data "warren_http_response_backend" "example" {
  id = "bkdhr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
