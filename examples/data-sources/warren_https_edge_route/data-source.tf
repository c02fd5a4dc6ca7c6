data "warren_https_edge_route" "example" {
  edge_id = "edghts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  id      = "edghtsrt_2Ajx5Nq4VfXqJyq4Vjq6GRzLMbT"
}
