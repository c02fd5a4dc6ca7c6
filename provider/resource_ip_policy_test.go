package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccIPPolicy(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ip_policy.test"
	cfg := func(description string) string {
		return env.config(`resource "warren_ip_policy" "test" { description = %q }`, description)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ip_policy", getter(env.client.IPPolicies.Get)),
		Steps: []resource.TestStep{
			{
				Config:            cfg("office"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "id", idPattern("ipp_"))},
			},
			{Config: cfg("office network"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate)},
			importSteps(cfg("office network"), addr)[0],
			importSteps(cfg("office network"), addr)[1],
			disappears(cfg("office network"), addr, env.client.IPPolicies.Delete),
		},
	})
}
