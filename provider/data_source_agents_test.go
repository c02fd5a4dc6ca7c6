package provider

import (
	"context"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// TestAccAgentDataSources reads the session, tunnels and endpoint of a real agent started
// by the test (what warren-agent runs) through every data source, then stops the agent and
// finds them gone.
func TestAccAgentDataSources(t *testing.T) {
	env := newAccEnv(t)
	ctx := context.Background()
	domain, err := env.client.ReservedDomains.Create(ctx, api.ReservedDomainCreate{Domain: api.String("app.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	group, err := env.client.TunnelGroupBackends.Create(ctx, api.TunnelGroupBackendCreate{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := env.client.Credentials.Create(ctx, api.CredentialCreate{ACL: []string{"bind:app.example.com", "bind:env=*", "bind:tier=web"}})
	if err != nil {
		t.Fatal(err)
	}
	agent := env.srv.StartAgent(t, agentclient.Config{
		Authtoken: *cred.Token, AgentVersion: "1.2.3", OS: "linux", Region: "eu", Metadata: "acc",
		Tunnels: []agentclient.TunnelConfig{
			{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"},
			{Proto: "http", Labels: map[string]string{"env": "prod", "tier": "web"}, ForwardsTo: "http://localhost:9090"},
		},
	})
	sessionID := agent.SessionID()
	bound := agent.Tunnels()
	hostTunnel, labeledTunnel := bound[0], bound[1]

	str := knownvalue.StringExact
	list := func(ids ...string) knownvalue.Check {
		checks := make([]knownvalue.Check, len(ids))
		for i, id := range ids {
			checks[i] = str(id)
		}
		return knownvalue.ListExact(checks)
	}
	item := func(addr, member string, i int, attr string, value knownvalue.Check) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(addr, tfjsonpath.New(member).AtSliceIndex(i).AtMapKey(attr), value)
	}
	cfg := env.config(`
data "warren_tunnel_session" "s" {
  id = %q
}

data "warren_tunnel_sessions" "eu" {
  filter = "obj.region == \"eu\" && obj.agent_version == \"1.2.3\""
}

data "warren_tunnel_sessions" "none" {
  filter = "obj.os == \"windows\""
}

data "warren_tunnel" "host" {
  id = %q
}

data "warren_tunnel" "labeled" {
  id = %q
}

data "warren_tunnels" "all" {}

data "warren_endpoint" "app" {
  id = data.warren_tunnel.host.endpoint_id
}

data "warren_endpoints" "https" {
  filter = "obj.proto == \"https\" && \"public\" in obj.bindings"
}

data "warren_endpoints" "tcp" {
  filter = "obj.proto == \"tcp\""
}
`, sessionID, hostTunnel.ID, labeledTunnel.ID)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue("data.warren_tunnel_session.s", "agent_version", str("1.2.3")),
					stateValue("data.warren_tunnel_session.s", "credential_id", str(cred.ID)),
					stateValue("data.warren_tunnel_session.s", "ip", str("127.0.0.1")),
					stateValue("data.warren_tunnel_session.s", "os", str("linux")),
					stateValue("data.warren_tunnel_session.s", "region", str("eu")),
					stateValue("data.warren_tunnel_session.s", "metadata", str("acc")),
					stateValue("data.warren_tunnel_session.s", "transport", str("warren/v2")),
					stateValue("data.warren_tunnel_session.s", "started_at", knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT`))),
					stateValue("data.warren_tunnel_sessions.eu", "tunnel_sessions", knownvalue.ListSizeExact(1)),
					item("data.warren_tunnel_sessions.eu", "tunnel_sessions", 0, "id", str(sessionID)),
					item("data.warren_tunnel_sessions.eu", "tunnel_sessions", 0, "credential_id", str(cred.ID)),
					stateValue("data.warren_tunnel_sessions.none", "tunnel_sessions", knownvalue.ListSizeExact(0)),

					stateValue("data.warren_tunnel.host", "proto", str("https")),
					stateValue("data.warren_tunnel.host", "forwards_to", str("http://localhost:8080")),
					stateValue("data.warren_tunnel.host", "public_url", str("https://app.example.com")),
					stateValue("data.warren_tunnel.host", "tunnel_session_id", str(sessionID)),
					stateValue("data.warren_tunnel.host", "endpoint_id", str(hostTunnel.EndpointID)),
					stateValue("data.warren_tunnel.host", "labels", knownvalue.Null()),
					stateValue("data.warren_tunnel.host", "backends", list()),
					stateValue("data.warren_tunnel.labeled", "proto", str("http")),
					stateValue("data.warren_tunnel.labeled", "forwards_to", str("http://localhost:9090")),
					stateValue("data.warren_tunnel.labeled", "labels", knownvalue.MapExact(map[string]knownvalue.Check{"env": str("prod"), "tier": str("web")})),
					stateValue("data.warren_tunnel.labeled", "backends", list(group.ID)),
					stateValue("data.warren_tunnel.labeled", "endpoint_id", knownvalue.Null()),
					stateValue("data.warren_tunnel.labeled", "public_url", knownvalue.Null()),
					stateValue("data.warren_tunnels.all", "tunnels", knownvalue.ListSizeExact(2)),

					stateValue("data.warren_endpoint.app", "url", str("https://app.example.com")),
					stateValue("data.warren_endpoint.app", "proto", str("https")),
					stateValue("data.warren_endpoint.app", "host", str("app.example.com")),
					stateValue("data.warren_endpoint.app", "port", knownvalue.Int64Exact(443)),
					stateValue("data.warren_endpoint.app", "hostport", str("app.example.com:443")),
					stateValue("data.warren_endpoint.app", "tunnel_id", str(hostTunnel.ID)),
					stateValue("data.warren_endpoint.app", "tunnel_session_id", str(sessionID)),
					stateValue("data.warren_endpoint.app", "domain_id", str(domain.ID)),
					stateValue("data.warren_endpoint.app", "tcp_addr_id", knownvalue.Null()),
					stateValue("data.warren_endpoint.app", "upstream_url", str("http://localhost:8080")),
					stateValue("data.warren_endpoint.app", "bindings", list("public")),
					stateValue("data.warren_endpoint.app", "type", str("agent")),
					stateValue("data.warren_endpoints.https", "endpoints", knownvalue.ListSizeExact(1)),
					item("data.warren_endpoints.https", "endpoints", 0, "id", str(hostTunnel.EndpointID)),
					item("data.warren_endpoints.https", "endpoints", 0, "url", str("https://app.example.com")),
					stateValue("data.warren_endpoints.tcp", "endpoints", knownvalue.ListSizeExact(0)),
				},
			},
			{
				Config:      env.config(`data "warren_tunnel_session" "x" { id = "ts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue" }`),
				ExpectError: regexp.MustCompile(`404`),
			},
			{
				Config:      env.config(`data "warren_tunnel" "x" { id = "tn_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue" }`),
				ExpectError: regexp.MustCompile(`404`),
			},
			{
				Config:      env.config(`data "warren_endpoint" "x" { id = "ep_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue" }`),
				ExpectError: regexp.MustCompile(`404`),
			},
			{
				Config:      env.config(`data "warren_endpoints" "x" { filter = "obj.nope == 1" }`),
				ExpectError: regexp.MustCompile(`ERR_250`),
			},
			{
				// The agent stops: its session, tunnels and endpoint are gone.
				PreConfig: func() {
					if err := env.client.TunnelSessions.Stop(ctx, sessionID); err != nil {
						t.Fatalf("stop the agent: %v", err)
					}
					if err := agent.Exited(t); err != nil {
						t.Fatalf("the agent's Run after stop: %v", err)
					}
					apiservertest.WaitUntil(t, "the session gone", func() bool {
						_, err := env.client.TunnelSessions.Get(ctx, sessionID)
						return client.IsNotFound(err)
					})
				},
				Config: env.config(`
data "warren_tunnel_sessions" "all" {}

data "warren_tunnels" "all" {}

data "warren_endpoints" "all" {}
`),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue("data.warren_tunnel_sessions.all", "tunnel_sessions", knownvalue.ListSizeExact(0)),
					stateValue("data.warren_tunnels.all", "tunnels", knownvalue.ListSizeExact(0)),
					stateValue("data.warren_endpoints.all", "endpoints", knownvalue.ListSizeExact(0)),
				},
			},
			{
				Config:      env.config(`data "warren_tunnel_session" "gone" { id = %q }`, sessionID),
				ExpectError: regexp.MustCompile(`404`),
			},
		},
	})
}
