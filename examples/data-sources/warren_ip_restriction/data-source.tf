data "warren_ip_restriction" "api" {
  id = "ipx_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
