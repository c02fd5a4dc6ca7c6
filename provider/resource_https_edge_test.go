package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccHTTPSEdge(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_https_edge.test"
	pki := newTestPKI(t, "app.example.com")
	base := fmt.Sprintf(`
resource "warren_reserved_domain" "app" { domain = "app.example.com" }

resource "warren_certificate_authority" "clients" { ca_pem = %q }
`, pki.caPEM)
	cfg := func(edge, extra string) string {
		return env.config(base+`
resource "warren_https_edge" "test" {
  depends_on = [warren_reserved_domain.app]
  %s
}
%s`, edge, extra)
	}
	// The host is spelled in mixed case: the API lowercases it, the state keeps this spelling.
	created := cfg(`description = "shop"
  hostports   = ["App.Example.com:443"]
  mutual_tls = {
    certificate_authority_ids = [warren_certificate_authority.clients.id]
  }
  tls_termination = {
    min_version = "1.2"
  }`, "")
	updated := cfg(`description = "shop"
  hostports   = ["App.Example.com:443"]
  tls_termination = {
    min_version = "1.3"
  }`, "")
	route := `
resource "warren_https_edge_route" "api" {
  edge_id    = warren_https_edge.test.id
  match_type = "path_prefix"
  match      = "/api"
}`
	withRoute := cfg(`description = "shop"
  hostports   = ["App.Example.com:443"]
  tls_termination = {
    min_version = "1.3"
  }`, route)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_https_edge", getter(env.client.HTTPSEdges.Get)),
		Steps: []resource.TestStep{
			// Plan-time checks of the hostports: the form, port 443, each listed once.
			{Config: cfg(`hostports = ["app.example.com"]`, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`must be hostname:port`)},
			{Config: cfg(`hostports = ["app.example.com:8443"]`, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`must use port 443`)},
			{Config: cfg(`hostports = ["app.example.com:443", "APP.example.com:443"]`, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`listed more than once`)},
			{Config: cfg(`tls_termination = { min_version = "1.4" }`, ""), PlanOnly: true, ExpectError: regexp.MustCompile(`TLS version "1.4" is not supported`)},
			{
				Config:           created,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("edghts_")),
					stateValue(addr, "hostports", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("App.Example.com:443")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("tls_termination").AtMapKey("terminate_at"), knownvalue.StringExact("edge")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("tls_termination").AtMapKey("enabled"), knownvalue.Bool(true)),
					statecheck.CompareValueCollection(addr, []tfjsonpath.Path{tfjsonpath.New("mutual_tls").AtMapKey("certificate_authority_ids")}, "warren_certificate_authority.clients", tfjsonpath.New("id"), compare.ValuesSame()),
					stateValue(addr, "routes", knownvalue.ListSizeExact(0)),
				},
			},
			// The API's spelling of the host differs from the state's after an import: the
			// import block plans no change (sameList), the CLI import is compared without it.
			importSteps(created, addr, "hostports")[0],
			importSteps(created, addr, "hostports")[1],
			{
				// A module changed in place and one removed (DELETE: the server has none).
				Config:           updated,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            moduleGone(addr, env.client.HTTPSEdges.GetModule, "mutual_tls"),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "mutual_tls", knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("tls_termination").AtMapKey("min_version"), knownvalue.StringExact("1.3")),
				},
			},
			{
				// A route is created; the edge's routes attribute is computed, so the edge plans
				// no change (expectAction checks the plan after apply and refresh is empty).
				Config:           withRoute,
				ConfigPlanChecks: expectAction("warren_https_edge_route.api", plancheck.ResourceActionCreate),
			},
			{
				// The refresh of the next run lists it.
				Config: withRoute,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "routes", knownvalue.ListSizeExact(1)),
					statecheck.CompareValueCollection(addr, []tfjsonpath.Path{tfjsonpath.New("routes")}, "warren_https_edge_route.api", tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			// The data sources show the same edge.
			{
				Config: withRoute + `
data "warren_https_edge" "test" { id = warren_https_edge.test.id }
data "warren_https_edges" "all" {}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.warren_https_edge.test", tfjsonpath.New("hostports"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("app.example.com:443")})),
					statecheck.ExpectKnownValue("data.warren_https_edge.test", tfjsonpath.New("tls_termination").AtMapKey("min_version"), knownvalue.StringExact("1.3")),
					statecheck.ExpectKnownValue("data.warren_https_edge.test", tfjsonpath.New("mutual_tls"), knownvalue.Null()),
					statecheck.CompareValueCollection("data.warren_https_edge.test", []tfjsonpath.Path{tfjsonpath.New("routes")}, "warren_https_edge_route.api", tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue("data.warren_https_edges.all", tfjsonpath.New("https_edges"), knownvalue.ListSizeExact(1)),
				},
			},
			// Deleting the edge behind Terraform's back deletes its route too: both are
			// created again.
			{
				Config:             withRoute,
				Check:              deleteBehindTerraform(addr, env.client.HTTPSEdges.Delete),
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("warren_https_edge_route.api", plancheck.ResourceActionCreate),
					},
				},
			},
			{Config: withRoute, ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate)},
		},
	})
}
