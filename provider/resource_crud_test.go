package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
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

// TestAccMembersFromReferences sets conflicting members from values known only after apply
// (another resource's attributes): the plan must fail, before anything is created.
func TestAccMembersFromReferences(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "rotate.example.com")
	later := `resource "terraform_data" "later" { input = %q }` + "\n"
	fails := func(pattern, cfg string, args ...any) resource.TestStep {
		return resource.TestStep{Config: env.config(cfg, args...), ExpectError: regexp.MustCompile(pattern)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			fails(`(?s)Invalid Attribute\s+Combination.*known only\s+after apply`, `
resource "warren_tls_certificate" "x" {
  certificate_pem = %q
  private_key_pem = %q
}
resource "warren_reserved_domain" "d" {
  domain                        = "rotate.example.com"
  certificate_id                = warren_tls_certificate.x.id
  certificate_management_policy = {}
}`, pki.certPEM, pki.keyPEM),
			fails(`(?s)Invalid Attribute\s+Combination`, later+`
resource "warren_tls_certificate" "x" {
  certificate_pem            = %[2]q
  private_key_pem            = terraform_data.later.output
  private_key_pem_wo         = %[1]q
  private_key_pem_wo_version = 1
}`, pki.keyPEM, pki.certPEM),
			fails(`(?s)Missing Attribute\s+Configuration.*private_key_pem_wo`, later+`
resource "warren_tls_certificate" "x" {
  certificate_pem            = %q
  private_key_pem            = %q
  private_key_pem_wo_version = terraform_data.later.output
}`, "1", pki.certPEM, pki.keyPEM),
			fails(`(?s)Invalid key\s+choice`, later+`
resource "warren_ssh_certificate_authority" "x" {
  private_key_type = "ed25519"
  key_size         = terraform_data.later.output
}`, "4096"),
			{
				// Nothing was applied: no step got past its plan.
				Config: env.config(``),
				Check: func(*terraform.State) error {
					for _, count := range []func(context.Context) (int, error){
						countOf(env.client.TLSCertificates.List), countOf(env.client.ReservedDomains.List), countOf(env.client.SSHCertificateAuthorities.List),
					} {
						if n, err := count(context.Background()); err != nil || n > 0 {
							return fmt.Errorf("%d objects were created (%v)", n, err)
						}
					}
					return nil
				},
			},
		},
	})
}

// countOf counts the objects of a list of the API.
func countOf[T any](list func(context.Context, client.ListOptions) ([]T, error)) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		items, err := list(ctx, client.ListOptions{})
		return len(items), err
	}
}
