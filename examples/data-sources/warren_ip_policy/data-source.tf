data "warren_ip_policy" "office" {
  id = "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
