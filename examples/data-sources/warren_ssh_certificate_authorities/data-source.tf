data "warren_ssh_certificate_authorities" "all" {}
