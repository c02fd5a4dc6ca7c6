data "warren_tunnel_credential" "edge" {
  id = "cr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
