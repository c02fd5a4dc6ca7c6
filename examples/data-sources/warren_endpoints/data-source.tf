data "warren_endpoints" "https" {
  filter = "obj.proto == \"https\" && \"public\" in obj.bindings"
}
