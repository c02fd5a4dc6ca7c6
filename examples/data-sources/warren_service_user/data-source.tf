# Look a service user up by name (or by id).
data "warren_service_user" "deployer" {
  name = "deployer"
}
