data "warren_ssh_credential" "laptop" {
  id = "sshcr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
