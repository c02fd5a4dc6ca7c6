package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccUnknownElements gives a label value, a weight and a header value that are known only
// after apply (terraform_data outputs): the plan must pass, the apply send the real values,
// and a bad value known at plan time next to an unknown one must still fail the plan.
func TestAccUnknownElements(t *testing.T) {
	env := newAccEnv(t)
	cfg := `
resource "terraform_data" "later" { input = %q }
resource "terraform_data" "weight" { input = 7 }
resource "warren_tunnel_group_backend" "x" {
  labels = { env = terraform_data.later.output, tier = "web" }
}
resource "warren_weighted_backend" "x" {
  backends = { (warren_tunnel_group_backend.x.id) = terraform_data.weight.output }
}
resource "warren_http_response_backend" "x" {
  headers = { "X-Env" = terraform_data.later.output }
}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: env.config(`
resource "terraform_data" "later" { input = "prod" }
resource "warren_tunnel_group_backend" "bad" {
  labels = { env = terraform_data.later.output, "a=b" = "web" }
}`),
				ExpectError: regexp.MustCompile(`(?s)Invalid labels.*may not contain '='`),
			},
			{
				Config: env.config(cfg, "prod"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("warren_tunnel_group_backend.x", tfjsonpath.New("labels").AtMapKey("env")),
					plancheck.ExpectUnknownValue("warren_weighted_backend.x", tfjsonpath.New("backends")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("warren_tunnel_group_backend.x", tfjsonpath.New("labels"), knownvalue.MapExact(map[string]knownvalue.Check{
						"env": knownvalue.StringExact("prod"), "tier": knownvalue.StringExact("web"),
					})),
					statecheck.ExpectKnownValue("warren_http_response_backend.x", tfjsonpath.New("headers").AtMapKey("X-Env"), knownvalue.StringExact("prod")),
					statecheck.ExpectKnownValue("warren_weighted_backend.x", tfjsonpath.New("backends"), knownvalue.MapSizeExact(1)),
				},
				Check: func(s *terraform.State) error {
					id := s.RootModule().Resources["warren_weighted_backend.x"].Primary.ID
					b, err := env.client.WeightedBackends.Get(context.Background(), id)
					if err != nil {
						return err
					}
					for _, w := range b.Backends {
						if w != 7 {
							return fmt.Errorf("weight %d reached the server, want 7", w)
						}
					}
					return nil
				},
			},
			{Config: env.config(cfg, "prod"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
