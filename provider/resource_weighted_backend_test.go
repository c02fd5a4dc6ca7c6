package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccWeightedBackend(t *testing.T) {
	env := newAccEnv(t)
	children := `
resource "warren_static_backend" "a" { address = "a.internal:80" }
resource "warren_static_backend" "b" { address = "b.internal:80" }
`
	backendCase(t, env, "weighted_backend", "bkdwd_",
		children+`resource "warren_weighted_backend" "test" {
  backends = { (warren_static_backend.a.id) = 90, (warren_static_backend.b.id) = 10 }
}`,
		children+`resource "warren_weighted_backend" "test" {
  backends = { (warren_static_backend.a.id) = 100 }
}`,
		[]statecheck.StateCheck{stateValue("warren_weighted_backend.test", "backends", knownvalue.MapSizeExact(2))},
		getter(env.client.WeightedBackends.Get), env.client.WeightedBackends.Delete)
}
