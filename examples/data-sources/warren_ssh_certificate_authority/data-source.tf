data "warren_ssh_certificate_authority" "hosts" {
  id = "sshca_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
