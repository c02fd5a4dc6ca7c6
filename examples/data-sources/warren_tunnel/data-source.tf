data "warren_tunnel" "web" {
  id = "tn_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}

output "tunnel_groups" {
  value = data.warren_tunnel.web.backends
}
