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

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestAccHTTPSEdgeRouteOAuth covers the modules the other route tests leave out: OAuth with
// the managed GitHub app, switched in place to Google with an own app whose secret is
// write-only, the websocket-to-TCP converter and response headers; then all are removed.
func TestAccHTTPSEdgeRouteOAuth(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_https_edge_route.test"
	const googleSecret = "google-secret-write-only-1"
	cfg := func(modules string) string {
		return env.config(`
resource "warren_reserved_domain" "app" { domain = "oauth.example.com" }

resource "warren_https_edge" "edge" { hostports = ["${warren_reserved_domain.app.domain}:443"] }

resource "warren_https_edge_route" "test" {
  edge_id    = warren_https_edge.edge.id
  match_type = "path_prefix"
  match      = "/"
  %s
}`, modules)
	}
	oauthOf := func(s *terraform.State) (*api.OAuthModule, error) {
		rs := s.RootModule().Resources[addr]
		var m api.OAuthModule
		err := env.client.HTTPSEdgeRoutes.Under(rs.Primary.Attributes["edge_id"]).GetModule(context.Background(), rs.Primary.ID, "oauth", &m)
		return &m, err
	}
	moduleAt := func(name string) tfjsonpath.Path { return tfjsonpath.New(name) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_https_edge", getter(env.client.HTTPSEdges.Get)),
		Steps: []resource.TestStep{
			{
				Config: cfg(`
  websocket_tcp_converter = {}
  response_headers = {
    add    = { "Strict-Transport-Security" = "max-age=31536000" }
    remove = ["server"]
  }
  oauth = {
    provider = {
      github = {
        teams         = ["acme/ops"]
        organizations = ["acme"]
        email_domains = ["acme.example"]
      }
    }
  }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, moduleAt("websocket_tcp_converter").AtMapKey("enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, moduleAt("oauth").AtMapKey("cookie_prefix"), knownvalue.StringExact("warren.")),
					statecheck.ExpectKnownValue(addr, moduleAt("oauth").AtMapKey("provider").AtMapKey("google"), knownvalue.Null()),
					// The configured spelling stays in state although the API lowercases names.
					statecheck.ExpectKnownValue(addr, moduleAt("response_headers").AtMapKey("add"), knownvalue.MapExact(map[string]knownvalue.Check{"Strict-Transport-Security": knownvalue.StringExact("max-age=31536000")})),
				},
				Check: func(s *terraform.State) error {
					m, err := oauthOf(s)
					if err != nil {
						return err
					}
					if m.Provider.GitHub == nil || m.Provider.GitHub.ClientID != nil || len(m.Provider.GitHub.Teams) != 1 || m.Provider.Google != nil {
						return fmt.Errorf("the server's oauth module is %+v", m.Provider)
					}
					return nil
				},
			},
			{
				Config: cfg(`
  websocket_tcp_converter = { enabled = false }
  oauth = {
    cookie_prefix = "shop."
    provider = {
      google = {
        client_id                = "shop.apps.example"
        client_secret_wo         = "` + googleSecret + `"
        client_secret_wo_version = 1
        scopes                   = ["openid", "email"]
        email_addresses          = ["ops@acme.example"]
      }
    }
  }`),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, moduleAt("oauth").AtMapKey("provider").AtMapKey("github"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, moduleAt("oauth").AtMapKey("provider").AtMapKey("google").AtMapKey("client_secret"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, moduleAt("websocket_tcp_converter").AtMapKey("enabled"), knownvalue.Bool(false)),
				},
				Check: func(s *terraform.State) error {
					m, err := oauthOf(s)
					if err != nil {
						return err
					}
					g := m.Provider.Google
					if m.Provider.GitHub != nil || g == nil || g.ClientSecret == nil || *g.ClientSecret != googleSecret || m.CookiePrefix != "shop." {
						return fmt.Errorf("the server's oauth module is %+v (google %+v)", m, g)
					}
					return nil
				},
			},
			{
				Config:           cfg(""),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check: func(s *terraform.State) error {
					rs := s.RootModule().Resources[addr]
					return moduleGone(addr, env.client.HTTPSEdgeRoutes.Under(rs.Primary.Attributes["edge_id"]).GetModule, "oauth", "websocket_tcp_converter", "response_headers")(s)
				},
			},
		},
	})
}
