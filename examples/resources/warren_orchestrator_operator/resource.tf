resource "warren_orchestrator_operator" "ingress" {
  description      = "ingress operator of the prod cluster"
  enabled_features = ["ingress", "bindings"]
  region           = "global"

  deployment = {
    name         = "warren-operator"
    namespace    = "warren-system"
    version      = "0.1.0"
    cluster_name = "prod-1"
  }

  binding = {
    endpoint_selectors = ["endpoint.proto == \"https\""]
    # e.g. openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=operator
    csr = file("${path.module}/operator.csr")
  }
}
