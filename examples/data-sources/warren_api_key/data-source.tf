data "warren_api_key" "ci" {
  id = "ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
