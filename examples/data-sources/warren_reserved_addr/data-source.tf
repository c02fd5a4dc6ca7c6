data "warren_reserved_addr" "ssh" {
  id = "ra_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
