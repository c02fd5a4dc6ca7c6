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

// TestAccTLSEdge: a TLS edge on a reserved domain passing TLS upstream, then terminating it
// with mutual TLS; both modules removed in one apply (mutual_tls goes first); data sources;
// import; disappears.
func TestAccTLSEdge(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "edge")
	const addr = "warren_tls_edge.test"
	cfg := func(edge string) string {
		return env.config(`
resource "warren_reserved_domain" "d" { domain = "tls-edge.example.org" }
resource "warren_static_backend" "b" { address = "10.0.0.5:8443" }
resource "warren_certificate_authority" "ca" { ca_pem = %q }
resource "warren_tls_edge" "test" {
  hostports = ["${warren_reserved_domain.d.domain}:443"]
  backend   = { backend_id = warren_static_backend.b.id }
  %s
}`, pki.caPEM, edge)
	}
	upstream := cfg(`tls_termination = { terminate_at = "upstream" }`)
	mutual := cfg(`tls_termination = { min_version = "1.2" }
  mutual_tls      = { certificate_authority_ids = [warren_certificate_authority.ca.id] }`)
	bare := cfg(`metadata = "{}"`)
	withData := bare + `
data "warren_tls_edge" "one" { id = warren_tls_edge.test.id }
data "warren_tls_edges" "all" { depends_on = [warren_tls_edge.test] }
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tls_edge", getter(env.client.TLSEdges.Get)),
		Steps: []resource.TestStep{
			{
				Config:           upstream,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("edgtls_")),
					stateValue(addr, "hostports", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("tls-edge.example.org:443")})),
					moduleValue(addr, "tls_termination", "terminate_at", knownvalue.StringExact("upstream")),
					moduleValue(addr, "tls_termination", "min_version", knownvalue.Null()),
					stateValue(addr, "mutual_tls", knownvalue.Null()),
				},
			},
			{
				Config:           mutual,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					moduleValue(addr, "tls_termination", "terminate_at", knownvalue.StringExact("edge")),
					moduleValue(addr, "tls_termination", "min_version", knownvalue.StringExact("1.2")),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("mutual_tls").AtMapKey("certificate_authority_ids").AtSliceIndex(0), "warren_certificate_authority.ca", tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			{
				Config:           bare,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "mutual_tls", knownvalue.Null()),
					stateValue(addr, "tls_termination", knownvalue.Null()),
				},
				Check: moduleGone(addr, env.client.TLSEdges.GetModule, "mutual_tls", "tls_termination"),
			},
			{
				Config: withData,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs("data.warren_tls_edge.one", tfjsonpath.New("id"), addr, tfjsonpath.New("id"), compare.ValuesSame()),
					stateValue("data.warren_tls_edge.one", "metadata", knownvalue.StringExact("{}")),
					stateValue("data.warren_tls_edge.one", "mutual_tls", knownvalue.Null()),
					moduleValue("data.warren_tls_edge.one", "backend", "enabled", knownvalue.Bool(true)),
					stateValue("data.warren_tls_edges.all", "tls_edges", knownvalue.ListSizeExact(1)),
				},
			},
			importSteps(bare, addr)[0],
			importSteps(bare, addr)[1],
			disappears(bare, addr, env.client.TLSEdges.Delete),
		},
	})
}
