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
)

// TestAccUnsetStringsAreNull: an optional string that is not set is null in state, in every
// resource and data source alike; `""` in the configuration is kept as "" (no perpetual
// diff), and removing a value clears it on the server.
func TestAccUnsetStringsAreNull(t *testing.T) {
	env := newAccEnv(t)
	// Every resource below takes description and metadata; set is what they are set to.
	cfg := func(set string) string {
		return env.config(`
resource "warren_ip_policy" "t" {
  %[1]s
}
resource "warren_static_backend" "t" {
  address = "10.0.0.5:80"
  %[1]s
}
resource "warren_http_response_backend" "t" {
  %[1]s
}
resource "warren_reserved_addr" "t" {
  %[1]s
}
resource "warren_ssh_certificate_authority" "t" {
  %[1]s
}
data "warren_ip_policy" "t" {
  id = warren_ip_policy.t.id
}`, set)
	}
	addrs := []string{"warren_ip_policy.t", "warren_static_backend.t", "warren_http_response_backend.t", "warren_reserved_addr.t", "warren_ssh_certificate_authority.t"}
	// The data source has no configuration: an empty value is always null there.
	dataNull := []statecheck.StateCheck{stateValue("data.warren_ip_policy.t", "description", knownvalue.Null()), stateValue("data.warren_ip_policy.t", "metadata", knownvalue.Null())}
	every := func(value knownvalue.Check, attrs ...string) []statecheck.StateCheck {
		var checks []statecheck.StateCheck
		for _, addr := range addrs {
			for _, attr := range attrs {
				checks = append(checks, stateValue(addr, attr, value))
			}
		}
		return append(checks, dataNull...)
	}
	updated := func() resource.ConfigPlanChecks {
		var pre []plancheck.PlanCheck
		for _, addr := range addrs {
			pre = append(pre, plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate))
		}
		return resource.ConfigPlanChecks{PreApply: pre, PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config:            cfg(""),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: append(every(knownvalue.Null(), "description", "metadata"), stateValue("warren_http_response_backend.t", "body", knownvalue.Null())),
			},
			{
				// "" says the same to the API; the state keeps it, so the next plan is empty.
				Config:            cfg(`description = ""` + "\n  metadata = \"\""),
				ConfigPlanChecks:  updated(),
				ConfigStateChecks: every(knownvalue.StringExact(""), "description", "metadata"),
			},
			{Config: cfg(`description = "d"` + "\n  metadata = \"m\""), ConfigPlanChecks: updated()},
			{
				// Removing them clears them on the server, not only in state.
				Config:            cfg(""),
				ConfigPlanChecks:  updated(),
				ConfigStateChecks: every(knownvalue.Null(), "description", "metadata"),
				Check: func(s *terraform.State) error {
					p, err := env.client.IPPolicies.Get(context.Background(), s.RootModule().Resources["warren_ip_policy.t"].Primary.ID)
					if err != nil {
						return err
					}
					if p.Description != "" || p.Metadata != "" {
						return fmt.Errorf("the API still holds %q / %q", p.Description, p.Metadata)
					}
					return nil
				},
			},
			{
				// An import of an object without them plans no change.
				Config: cfg(""), ResourceName: "warren_static_backend.t", ImportState: true, ImportStateKind: resource.ImportBlockWithID,
			},
		},
	})
}
