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

// TestAccEdgeUpdateFailsHalfway: an update that removes a module (DELETE …/traffic_policy,
// which succeeds) and moves the edge to an address the account has not reserved (the PATCH,
// which the server refuses with ERR_7113) fails, and the state still tells the truth: the
// module is gone and the hostport is the old one; the next apply puts the module back.
func TestAccEdgeUpdateFailsHalfway(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_tcp_edge.test"
	cfg := func(hostports, modules string) string {
		return env.config(`
resource "warren_reserved_addr" "a" {}
resource "warren_static_backend" "b" { address = "10.0.0.5:22" }
resource "warren_tcp_edge" "test" {
  hostports = [%s]
  backend   = { backend_id = warren_static_backend.b.id }
  %s
}`, hostports, modules)
	}
	const policy = `traffic_policy = {
    value = jsonencode({ on_tcp_connect = [{ expressions = ["conn.client_ip == '1.2.3.4'"], actions = [{ type = "deny" }] }] })
  }`
	withPolicy := cfg("warren_reserved_addr.a.addr", policy)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tcp_edge", getter(env.client.TCPEdges.Get)),
		Steps: []resource.TestStep{
			{Config: withPolicy},
			{
				Config:      cfg(`"tcp.unreserved.example:20000"`, ""),
				ExpectError: regexp.MustCompile(`ERR_7113`),
			},
			{
				// The module's removal took effect and the PATCH did not: the edge on its old
				// address without the module is exactly what Terraform holds.
				Config:           cfg("warren_reserved_addr.a.addr", ""),
				ConfigPlanChecks: emptyPlan(),
				Check:            moduleGone(addr, env.client.TCPEdges.GetModule, "traffic_policy"),
			},
			{
				// The plan puts the module back in place.
				Config:           withPolicy,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					moduleValue(addr, "traffic_policy", "enabled", knownvalue.Bool(true)),
				},
			},
		},
	})
}

// TestAccTCPEdgeDataSources reads a TCP edge by ID and in the list, with its modules.
func TestAccTCPEdgeDataSources(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: env.config(`
resource "warren_reserved_addr" "a" {}
resource "warren_static_backend" "b" { address = "10.0.0.5:22" }
resource "warren_tcp_edge" "test" {
  description = "ssh"
  hostports   = [warren_reserved_addr.a.addr]
  backend     = { backend_id = warren_static_backend.b.id }
}

data "warren_tcp_edge" "one" { id = warren_tcp_edge.test.id }

data "warren_tcp_edges" "all" { depends_on = [warren_tcp_edge.test] }
`),
			ConfigStateChecks: []statecheck.StateCheck{
				stateValue("data.warren_tcp_edge.one", "description", knownvalue.StringExact("ssh")),
				moduleValue("data.warren_tcp_edge.one", "backend", "enabled", knownvalue.Bool(true)),
				stateValue("data.warren_tcp_edge.one", "traffic_policy", knownvalue.Null()),
				statecheck.CompareValuePairs("data.warren_tcp_edge.one", tfjsonpath.New("hostports"), "warren_tcp_edge.test", tfjsonpath.New("hostports"), compare.ValuesSame()),
				stateValue("data.warren_tcp_edges.all", "tcp_edges", knownvalue.ListSizeExact(1)),
			},
		}},
	})
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
