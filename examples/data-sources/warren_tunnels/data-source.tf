data "warren_tunnels" "all" {}

# The tunnels a tunnel group backend would balance over.
output "prod_tunnels" {
  value = [for t in data.warren_tunnels.all.tunnels : t.id if try(t.labels.env, "") == "prod"]
}
