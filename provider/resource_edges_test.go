package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// moduleGone checks through the API that an edge's modules are not configured (GET 404).
func moduleGone(addr string, getModule func(ctx context.Context, id, module string, out any) error, modules ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		for _, m := range modules {
			var out map[string]any
			err := getModule(context.Background(), rs.Primary.ID, m, &out)
			if err == nil {
				return fmt.Errorf("%s still has the module %s on the server: %v", addr, m, out)
			}
			if !client.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
}

func emptyPlan() resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
}

func moduleValue(addr, module, member string, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(module).AtMapKey(member), value)
}

// TestAccTCPEdge: a TCP edge on a reserved address created in the same configuration, with a
// backend and a traffic policy; a reformatted policy and an upper-case hostport are no change;
// a module changed in place and one added; one removed (gone on the server); import;
// disappears.
func TestAccTCPEdge(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_tcp_edge.test"
	cfg := func(hostport, edge string) string {
		return env.config(`
resource "warren_reserved_addr" "a" {}
resource "warren_static_backend" "b" { address = "10.0.0.5:22" }
resource "warren_ip_policy" "p" {}
resource "warren_tcp_edge" "test" {
  hostports = [%s]
  %s
}`, hostport, edge)
	}
	const policyJSON = `traffic_policy = {
    value = jsonencode({ on_tcp_connect = [{ expressions = ["conn.client_ip == '1.2.3.4'"], actions = [{ type = "deny" }] }] })
  }`
	const policyYAML = `traffic_policy = {
    value = <<-EOT
      on_tcp_connect:
        - actions:
            - type: deny
          expressions: ["conn.client_ip == '1.2.3.4'"]
    EOT
  }`
	const backend = `backend = { backend_id = warren_static_backend.b.id }`
	v1 := cfg("warren_reserved_addr.a.addr", backend+"\n"+policyJSON)
	v2 := cfg("warren_reserved_addr.a.addr", `description = "ssh"
  backend = {
    backend_id = warren_static_backend.b.id
    enabled    = false
  }
  ip_restriction = { ip_policy_ids = [warren_ip_policy.p.id] }
  `+policyJSON)
	v3 := cfg("warren_reserved_addr.a.addr", `description = "ssh"
  backend = {
    backend_id = warren_static_backend.b.id
    enabled    = false
  }
  ip_restriction = { ip_policy_ids = [warren_ip_policy.p.id] }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tcp_edge", getter(env.client.TCPEdges.Get)),
		Steps: []resource.TestStep{
			{
				Config:           v1,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("edgtcp_")),
					stateValue(addr, "description", knownvalue.Null()),
					stateValue(addr, "ip_restriction", knownvalue.Null()),
					moduleValue(addr, "backend", "enabled", knownvalue.Bool(true)),
					moduleValue(addr, "traffic_policy", "enabled", knownvalue.Bool(true)),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("hostports").AtSliceIndex(0), "warren_reserved_addr.a", tfjsonpath.New("addr"), compare.ValuesSame()),
				},
			},
			// The same policy in YAML, the hostport in upper case: nothing to do.
			{Config: cfg("warren_reserved_addr.a.addr", backend+"\n"+policyYAML), ConfigPlanChecks: emptyPlan()},
			{Config: cfg("upper(warren_reserved_addr.a.addr)", backend+"\n"+policyJSON), ConfigPlanChecks: emptyPlan()},
			{
				Config:           v2,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					moduleValue(addr, "backend", "enabled", knownvalue.Bool(false)),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("ip_restriction").AtMapKey("ip_policy_ids").AtSliceIndex(0), "warren_ip_policy.p", tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			{
				Config:            v3,
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "traffic_policy", knownvalue.Null())},
				Check:             moduleGone(addr, env.client.TCPEdges.GetModule, "traffic_policy"),
			},
			importSteps(v3, addr)[0],
			importSteps(v3, addr)[1],
			disappears(v3, addr, env.client.TCPEdges.Delete),
		},
	})
}

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

// TestAccEdgeValidation: the rules over edges fail the plan, including when a member comes
// from another resource and is known only at apply.
func TestAccEdgeValidation(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "v")
	tcp := func(body string) string {
		return env.config(`resource "warren_tcp_edge" "t" {
  %s
}`, body)
	}
	tls := func(body string) string {
		return env.config(`
resource "warren_certificate_authority" "ca" { ca_pem = %q }
resource "warren_tls_edge" "t" {
  %s
}`, pki.caPEM, body)
	}
	for _, tt := range []struct {
		name, config, err string
	}{
		{"hostport without port", tcp(`hostports = ["tcp.example.org"]`), `(?s)Invalid hostport.*"tcp.example.org" must be hostname:port`},
		{"hostport port out of range", tcp(`hostports = ["tcp.example.org:70000"]`), `(?s)port of .* must be from 1 to 65535`},
		{"hostport twice, in another case", tcp(`hostports = ["a.example.org:1", "A.example.org:1"]`), `(?s)Duplicate hostport.*"A.example.org:1" is listed more than once`},
		{"empty IP policy list", tcp(`ip_restriction = { ip_policy_ids = [] }`), `needs at least one IP policy`},
		{"HTTP phase on a TCP edge", tcp(`traffic_policy = { value = jsonencode({ on_http_request = [{ actions = [{ type = "deny" }] }] }) }`), `(?s)on_http_request is not allowed in the traffic policy of a TCP edge`},
		{"unknown action type", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "teleport" }] }] }) }`), `(?s)unknown\s+type\s+"teleport".\s+Supported\s+types\s+are\s+add-headers,\s+close-connection,`},
		{"bad traffic policy action config", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "restrict-ips", config = { allow = ["not-a-cidr"] } }] }] }) }`), `(?s)on_tcp_connect\s+rule\s+1:\s+action\s+1\s+\(restrict-ips\):\s+allow:\s+"not-a-cidr"\s+is\s+not\s+a\s+CIDR\s+range`},
		{"traffic policy action not run here", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "terminate-tls" }] }] }) }`), `(?s)action\s+1\s+\(terminate-tls\):\s+this\s+server\s+does\s+not\s+run\s+this\s+action\s+type`},
		{"min_version with upstream", tls(`tls_termination = {
    terminate_at = "upstream"
    min_version  = "1.2"
  }`), `(?s)min_version must be null when terminate_at is .upstream`},
		// The CA's ID is known only at apply: the module is configured all the same.
		{"mutual TLS with upstream", tls(`tls_termination = { terminate_at = "upstream" }
  mutual_tls      = { certificate_authority_ids = [warren_certificate_authority.ca.id] }`), `(?s)mutual_tls.*terminate_at is "upstream"`},
		{"unknown terminate_at", tls(`tls_termination = { terminate_at = "origin" }`), `Invalid terminate_at "origin"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: providerFactories,
				Steps:                    []resource.TestStep{{Config: tt.config, PlanOnly: true, ExpectError: regexp.MustCompile(tt.err)}},
			})
		})
	}
}
