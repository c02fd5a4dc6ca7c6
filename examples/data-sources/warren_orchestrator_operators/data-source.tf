data "warren_orchestrator_operators" "all" {}
