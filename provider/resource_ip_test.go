package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
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

func TestAccIPValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{Config: env.config("%s", body), PlanOnly: true, ExpectError: regexp.MustCompile(pattern)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`resource "warren_ip_policy_rule" "t" {
  ip_policy_id = "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  cidr         = "10.1.2.3/8"
  action       = "allow"
}`, `(?s)use\s+10\.0\.0\.0/8`),
			step(`resource "warren_ip_policy_rule" "t" {
  ip_policy_id = "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  cidr         = "10.0.0.0/8"
  action       = "block"
}`, `value must be one of`),
			step(`resource "warren_ip_restriction" "t" {
  type          = "api"
  ip_policy_ids = []
}`, `(?s)at least 1`),
		},
	})
}
