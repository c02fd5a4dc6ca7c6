package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccFailoverBackend(t *testing.T) {
	env := newAccEnv(t)
	children := `
resource "warren_static_backend" "a" { address = "a.internal:80" }
resource "warren_http_response_backend" "sorry" { status_code = 503 }
`
	backendCase(t, env, "failover_backend", "bkdfo_",
		children+`resource "warren_failover_backend" "test" {
  backends = [warren_static_backend.a.id, warren_http_response_backend.sorry.id]
}`,
		children+`resource "warren_failover_backend" "test" {
  backends = [warren_http_response_backend.sorry.id, warren_static_backend.a.id]
}`,
		[]statecheck.StateCheck{stateValue("warren_failover_backend.test", "backends", knownvalue.ListSizeExact(2))},
		getter(env.client.FailoverBackends.Get), env.client.FailoverBackends.Delete)
}
