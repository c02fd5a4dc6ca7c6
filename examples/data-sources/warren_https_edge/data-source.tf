data "warren_https_edge" "example" {
  id = "edghts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
