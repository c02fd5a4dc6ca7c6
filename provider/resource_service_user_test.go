package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccServiceUser(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_service_user.test"
	cfg := func(name string, active bool) string {
		return env.config(`
resource "warren_service_user" "test" {
  name   = %q
  active = %t
}`, name, active)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_service_user", getter(env.client.ServiceUsers.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg("deployer", true),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("service_")),
					stateValue(addr, "name", knownvalue.StringExact("deployer")),
					stateValue(addr, "active", knownvalue.Bool(true)),
				},
			},
			{
				// Renaming and deactivating are updates in place.
				Config:           cfg("deployer-2", false),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "name", knownvalue.StringExact("deployer-2")),
					stateValue(addr, "active", knownvalue.Bool(false)),
				},
			},
			importSteps(cfg("deployer-2", false), addr)[0],
			importSteps(cfg("deployer-2", false), addr)[1],
			disappears(cfg("deployer-2", false), addr, env.client.ServiceUsers.Delete),
		},
	})
}

func TestAccServiceUserValidation(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config:      env.config(`resource "warren_service_user" "test" { name = "" }`),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`must not be empty`),
		}},
	})
}
