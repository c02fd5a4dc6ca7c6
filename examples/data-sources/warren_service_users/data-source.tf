data "warren_service_users" "all" {}
