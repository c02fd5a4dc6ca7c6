data "warren_orchestrator_operator" "ingress" {
  id = "orop_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}

output "operator_cert" {
  value = data.warren_orchestrator_operator.ingress.binding.cert
}
