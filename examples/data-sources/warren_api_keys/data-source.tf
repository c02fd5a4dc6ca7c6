# Every API key whose description is "CI pipeline" (a CEL filter, evaluated by the server).
data "warren_api_keys" "ci" {
  filter = "obj.description == \"CI pipeline\""
}
