package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestAccTunnelGroupBackendLiveState: the tunnels a group matches are live state, kept out of
// the resource, so an agent connecting after the apply changes nothing the next plan sees
// (not even an output naming the whole resource); the data source shows the agent's tunnel.
func TestAccTunnelGroupBackendLiveState(t *testing.T) {
	env := newAccEnv(t)
	cfg := env.config(`
resource "warren_tunnel_group_backend" "test" {
  labels = { env = "prod" }
}

output "backend" {
  value = warren_tunnel_group_backend.test
}
`)
	withData := cfg + `
data "warren_tunnel_group_backend" "test" {
  id = warren_tunnel_group_backend.test.id
}
`
	var tunnelID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					cred, err := env.client.Credentials.Create(context.Background(), api.CredentialCreate{ACL: []string{"bind:env=*"}})
					if err != nil {
						t.Fatal(err)
					}
					agent := env.srv.StartAgent(t, agentclient.Config{
						Authtoken: *cred.Token,
						Tunnels:   []agentclient.TunnelConfig{{Proto: "http", Labels: map[string]string{"env": "prod"}, ForwardsTo: "http://localhost:9090"}},
					})
					tunnelID = agent.Tunnels()[0].ID
				},
				Config:   cfg,
				PlanOnly: true, // fails on any change, outputs included
			},
			{
				Config: withData,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.warren_tunnel_group_backend.test", tfjsonpath.New("tunnels"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue("data.warren_tunnel_group_backend.test", tfjsonpath.New("tunnels").AtSliceIndex(0), knownvalue.StringFunc(func(v string) error { return sameAs(tunnelID, v) })),
				},
			},
		},
	})
}

// A state written while the resource still had `tunnels` upgrades without it.
func TestTunnelGroupBackendStateWithTunnels(t *testing.T) {
	server, err := providerFactories["warren"]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "warren_tunnel_group_backend",
		RawState: &tfprotov6.RawState{JSON: []byte(`{"id":"bkdtg_1","description":null,"metadata":null,"labels":{"env":"prod"},"tunnels":["tn_1"],"created_at":"2026-01-01T00:00:00Z"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	if resp.UpgradedState == nil {
		t.Fatal("no upgraded state")
	}
}

func TestAccTunnelGroupBackend(t *testing.T) {
	env := newAccEnv(t)
	backendCase(t, env, "tunnel_group_backend", "bkdtg_",
		`resource "warren_tunnel_group_backend" "test" { labels = { env = "prod" } }`,
		`resource "warren_tunnel_group_backend" "test" { labels = { env = "prod", team = "web" } }`,
		[]statecheck.StateCheck{stateValue("warren_tunnel_group_backend.test", "labels", knownvalue.MapSizeExact(1))},
		getter(env.client.TunnelGroupBackends.Get), env.client.TunnelGroupBackends.Delete)
}
