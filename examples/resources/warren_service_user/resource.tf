resource "warren_service_user" "deployer" {
  name   = "deployer"
  active = true
}
