data "warren_certificate_authority" "clients" {
  id = "ca_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
