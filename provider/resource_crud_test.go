package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestAccImportSpelledDifferently imports objects created outside Terraform with a
// configuration that spells a normalised value differently from the API (domain case, header
// name case, IPv6 CIDR case): the plan after the import is empty, with an import block and
// with `terraform import` alike.
func TestAccImportSpelledDifferently(t *testing.T) {
	env := newAccEnv(t)
	ctx := context.Background()
	domain, err := env.client.ReservedDomains.Create(ctx, api.ReservedDomainCreate{Domain: api.String("shop.example.org")})
	if err != nil {
		t.Fatal(err)
	}
	backend, err := env.client.HTTPResponseBackends.Create(ctx, api.HTTPResponseBackendCreate{Headers: map[string]string{"Content-Type": "text/plain", "X-Trace": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := env.client.IPPolicies.Create(ctx, api.IPPolicyCreate{})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := env.client.IPPolicyRules.Create(ctx, api.IPPolicyRuleCreate{CIDR: api.String("2001:db8:ab::/48"), IPPolicyID: &policy.ID, Action: api.String("allow")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ addr, id, cfg string }{
		{"warren_reserved_domain.t", domain.ID, `resource "warren_reserved_domain" "t" { domain = "Shop.Example.ORG" }`},
		{"warren_http_response_backend.t", backend.ID, `resource "warren_http_response_backend" "t" {
  headers = { "CONTENT-TYPE" = "text/plain", "x-Trace" = "on" }
}`},
		{"warren_ip_policy_rule.t", rule.ID, fmt.Sprintf(`resource "warren_ip_policy_rule" "t" {
  ip_policy_id = %q
  cidr         = "2001:DB8:AB::/48"
  action       = "allow"
}`, policy.ID)},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			cfg := env.config("%s", tt.cfg)
			noChange := []plancheck.PlanCheck{plancheck.ExpectResourceAction(tt.addr, plancheck.ResourceActionNoop)}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: providerFactories,
				Steps: []resource.TestStep{
					{
						Config: cfg, ResourceName: tt.addr, ImportStateId: tt.id, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
						ImportPlanChecks: resource.ImportPlanChecks{PreApply: noChange},
					},
					{Config: cfg, ResourceName: tt.addr, ImportStateId: tt.id, ImportState: true, ImportStatePersist: true},
					{Config: cfg, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
				},
			})
		})
	}
}
