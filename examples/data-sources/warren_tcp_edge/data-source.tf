data "warren_tcp_edge" "example" {
  id = "edgtcp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
