package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccStaticBackend(t *testing.T) {
	env := newAccEnv(t)
	backendCase(t, env, "static_backend", "bkdsc_",
		`resource "warren_static_backend" "test" { address = "10.0.0.5:8080" }`,
		`resource "warren_static_backend" "test" {
  address = "10.0.0.6:8443"
  tls     = { enabled = true }
}`,
		[]statecheck.StateCheck{statecheck.ExpectKnownValue("warren_static_backend.test", tfjsonpath.New("tls").AtMapKey("enabled"), knownvalue.Bool(false))},
		getter(env.client.StaticBackends.Get), env.client.StaticBackends.Delete)
}
