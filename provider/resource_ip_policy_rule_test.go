package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccIPPolicyRule(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ip_policy_rule.test"
	cfg := func(policy, cidr, action string) string {
		return env.config(`
resource "warren_ip_policy" "a" {}
resource "warren_ip_policy" "b" {}

resource "warren_ip_policy_rule" "test" {
  ip_policy_id = warren_ip_policy.%s.id
  cidr         = %q
  action       = %q
}`, policy, cidr, action)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ip_policy_rule", getter(env.client.IPPolicyRules.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg("a", "10.0.0.0/8", "allow"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ipr_")),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("ip_policy_id"), "warren_ip_policy.a", tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			// A new CIDR updates in place; an upper-case IPv6 CIDR is the same one: no change.
			{Config: cfg("a", "2001:db8::/32", "allow"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate)},
			{
				Config:            cfg("a", "2001:DB8::/32", "allow"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionNoop),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "cidr", knownvalue.StringExact("2001:db8::/32"))},
			},
			importSteps(cfg("a", "2001:db8::/32", "allow"), addr)[0],
			importSteps(cfg("a", "2001:db8::/32", "allow"), addr)[1],
			{Config: cfg("a", "2001:db8::/32", "deny"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			{Config: cfg("b", "2001:db8::/32", "deny"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			disappears(cfg("b", "2001:db8::/32", "deny"), addr, env.client.IPPolicyRules.Delete),
		},
	})
}
