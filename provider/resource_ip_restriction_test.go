package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccIPRestriction(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ip_restriction.test"
	cfg := func(kind string, enforced bool, policies string) string {
		return env.config(`
resource "warren_ip_policy" "a" {}
resource "warren_ip_policy" "b" {}

# The server refuses to enforce an api restriction that would lock out its caller (here the
# loopback address); depends_on keeps the rule until the restriction is gone.
resource "warren_ip_policy_rule" "local" {
  ip_policy_id = warren_ip_policy.b.id
  cidr         = "127.0.0.0/8"
  action       = "allow"
}

resource "warren_ip_restriction" "test" {
  type          = %q
  enforced      = %t
  ip_policy_ids = %s
  depends_on    = [warren_ip_policy_rule.local]
}`, kind, enforced, policies)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ip_restriction", getter(env.client.IPRestrictions.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg("api", false, "[warren_ip_policy.a.id]"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ipx_")),
					stateValue(addr, "ip_policy_ids", knownvalue.ListSizeExact(1)),
				},
			},
			{
				Config:            cfg("api", true, "[warren_ip_policy.a.id, warren_ip_policy.b.id]"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "ip_policy_ids", knownvalue.ListSizeExact(2)), stateValue(addr, "enforced", knownvalue.Bool(true))},
			},
			importSteps(cfg("api", true, "[warren_ip_policy.a.id, warren_ip_policy.b.id]"), addr)[0],
			importSteps(cfg("api", true, "[warren_ip_policy.a.id, warren_ip_policy.b.id]"), addr)[1],
			{Config: cfg("agent", true, "[warren_ip_policy.b.id]"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			disappears(cfg("agent", true, "[warren_ip_policy.b.id]"), addr, env.client.IPRestrictions.Delete),
		},
	})
}
