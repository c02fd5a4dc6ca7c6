data "warren_tls_edge" "example" {
  id = "edgtls_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
