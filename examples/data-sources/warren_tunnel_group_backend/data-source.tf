data "warren_tunnel_group_backend" "example" {
  id = "bkdtg_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
