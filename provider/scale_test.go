package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// TestAccScaleDefaultRateLimit applies 300 resources against a server with its default
// settings (rate limit included), as a real configuration of a few hundred resources would:
// the apply, the refresh and plans that follow, and the destroy all pass with no 429 error
// surfacing, and the plan after the apply is empty.
func TestAccScaleDefaultRateLimit(t *testing.T) {
	const n = 300
	env := newAccEnv(t)
	cfg := env.config(`resource "warren_ip_policy" "scale" {
  count       = %d
  description = "scale ${count.index}"
}`, n)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ip_policy", getter(env.client.IPPolicies.Get)),
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("warren_ip_policy.scale[299]", tfjsonpath.New("description"), knownvalue.StringExact("scale 299")),
			},
			Check: func(*terraform.State) error {
				all, err := env.client.IPPolicies.List(context.Background(), client.ListOptions{Limit: 100})
				if err == nil && len(all) != n {
					err = fmt.Errorf("the API holds %d IP policies, want %d", len(all), n)
				}
				return err
			},
		}},
	})
}
