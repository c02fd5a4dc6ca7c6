data "warren_endpoint" "app" {
  id = "ep_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}

output "app_url" {
  value = data.warren_endpoint.app.url
}
