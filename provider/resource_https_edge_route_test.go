package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestAccHTTPSEdgeRoute(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_https_edge_route.test"
	const secret = "oidc-secret-never-in-state"
	metadata, err := os.ReadFile("../internal/rules/testdata/idp_metadata.xml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(route string) string {
		if !strings.Contains(route, "match_type") {
			route = `match_type = "path_prefix"
  ` + route
		}
		return env.config(`
resource "warren_reserved_domain" "app" { domain = "app.example.com" }

resource "warren_https_edge" "edge" { hostports = ["${warren_reserved_domain.app.domain}:443"] }

resource "warren_static_backend" "app" { address = "10.0.0.5:8080" }

resource "warren_ip_policy" "office" { description = "office" }

resource "warren_https_edge_route" "test" {
  edge_id = warren_https_edge.edge.id
  %s
}`, route)
	}
	created := cfg(`match       = "/api"
  description = "api"
  backend = { backend_id = warren_static_backend.app.id }
  ip_restriction = { ip_policy_ids = [warren_ip_policy.office.id] }
  circuit_breaker = {}
  request_headers = { add = { "x-env" = "prod" } }`)
	updated := cfg(`match       = "/api"
  description = "api"
  backend = { backend_id = warren_static_backend.app.id }
  circuit_breaker = { tripped_duration = 30 }
  request_headers = { add = { "x-env" = "prod" } }
  compression = {}
  user_agent_filter = { deny = ["(?i)curl/.*"] }
  traffic_policy = {
    value = jsonencode({ on_http_request = [{ actions = [{ type = "deny" }] }] })
  }`)
	// OIDC with a write-only secret: it reaches the server, never the state; its e-mail
	// rules set, then changed.
	oidcWith := func(rules string) string {
		return cfg(fmt.Sprintf(`match = "/api"
  backend = { backend_id = warren_static_backend.app.id }
  oidc = {
    issuer                   = "https://login.example.com"
    client_id                = "warren"
    client_secret_wo         = %q
    client_secret_wo_version = 1
    %s
  }`, secret, rules))
	}
	oidc := oidcWith(`email_addresses = ["alice@example.com", "bob@example.com"]
    email_domains   = ["corp.example"]`)
	oidcRulesChanged := oidcWith(`email_addresses = ["carol@example.com"]`)
	// OIDC replaced by SAML in one apply: the OIDC module is deleted before the PATCH adds SAML.
	saml := cfg(fmt.Sprintf(`match = "/api"
  backend = { backend_id = warren_static_backend.app.id }
  saml = { idp_metadata = %q }`, metadata))
	webhook := cfg(`match = "/hooks"
  backend = { backend_id = warren_static_backend.app.id }
  webhook_verification = {
    provider = "GitHub"
    secret   = "whsec-kept-sensitive"
  }`)
	routeModules := func(rs *terraform.ResourceState) func(ctx context.Context, id, module string, out any) error {
		return env.client.HTTPSEdgeRoutes.Under(rs.Primary.Attributes["edge_id"]).GetModule
	}
	// oidcRules checks through the API the e-mail rules the server has.
	oidcRules := func(emails, domains []string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			rs := s.RootModule().Resources[addr]
			var m api.OIDCModule
			if err := routeModules(rs)(context.Background(), rs.Primary.ID, "oidc", &m); err != nil {
				return err
			}
			if !slices.Equal(m.EmailAddresses, emails) || !slices.Equal(m.EmailDomains, domains) {
				return fmt.Errorf("the server's e-mail rules are %q and %q, want %q and %q", m.EmailAddresses, m.EmailDomains, emails, domains)
			}
			return nil
		}
	}
	// routeModuleGone checks through the API that the route has none of modules (GET 404).
	routeModuleGone := func(modules ...string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			rs, ok := s.RootModule().Resources[addr]
			if !ok {
				return fmt.Errorf("%s not in state", addr)
			}
			return moduleGone(addr, routeModules(rs), modules...)(s)
		}
	}
	importID := func(s *terraform.State) (string, error) {
		rs := s.RootModule().Resources[addr]
		return rs.Primary.Attributes["edge_id"] + "/" + rs.Primary.ID, nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy: func(s *terraform.State) error {
			for _, rs := range s.RootModule().Resources {
				if rs.Type == "warren_https_edge_route" {
					if err := checkDestroyed(rs.Type, getter(env.client.HTTPSEdgeRoutes.Under(rs.Primary.Attributes["edge_id"]).Get))(s); err != nil {
						return err
					}
				}
			}
			return checkDestroyed("warren_https_edge", getter(env.client.HTTPSEdges.Get))(s)
		},
		Steps: []resource.TestStep{
			// Plan-time checks: the match, one auth module, a module's own rules.
			{Config: cfg(`match = "api"`), PlanOnly: true, ExpectError: regexp.MustCompile(`must be a path of the form /path`)},
			{Config: cfg(`match = "/a"
  match_type = "regex"`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid match_type`)},
			{
				Config: cfg(`match = "/a"
  oidc = {
    issuer        = "https://login.example.com"
    client_id     = "a"
    client_secret = "b"
  }
  saml = { idp_metadata = "x" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Only one of oauth, oidc and saml may be enabled on a route.*enabled: saml, oidc`),
			},
			{Config: cfg(`match = "/a"
  oidc = {
    issuer    = "https://login.example.com"
    client_id = "a"
  }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)exactly one of.*client_secret`)},
			{Config: cfg(`match = "/a"
  oidc = {
    issuer          = "https://login.example.com"
    client_id       = "a"
    client_secret   = "b"
    email_addresses = ["Alice@example.com"]
  }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)e-mail address "Alice@example.com" must be\s+lowercase`)},
			{Config: cfg(`match = "/a"
  oidc = {
    issuer        = "https://login.example.com"
    client_id     = "a"
    client_secret = "b"
    email_domains = ["corp.example", "corp.example"]
  }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)"corp.example" is listed more than once`)},
			{Config: cfg(`match = "/a"
  user_agent_filter = { allow = ["(unclosed"] }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)user agent pattern "\(unclosed" is not a\s+valid regular expression`)},
			// Every problem of a module is reported, each once.
			{Config: cfg(`match = "/a"
  circuit_breaker = {
    num_buckets                = 0
    error_threshold_percentage = 50
  }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)num_buckets must be from 1 to 128; got 0.*error_threshold_percentage must be\s+from 0.0 to 1.0`)},
			// A CEL error clips the long name it quotes inside its quotes, not the message around it.
			{Config: cfg(`match = "/a"
  traffic_policy = { value = jsonencode({ on_http_request = [{ expressions = ["` + strings.Repeat("n", 150) + ` == 1"], actions = [{ type = "deny" }] }] }) }`),
				PlanOnly: true, ExpectError: regexp.MustCompile(`undeclared\s+reference\s+to\s+'n{100}…'\.`)},
			{
				Config:           created,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("edghtsrt_")),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("edge_id"), "warren_https_edge.edge", tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.CompareValuePairs(addr, tfjsonpath.New("backend").AtMapKey("backend_id"), "warren_static_backend.app", tfjsonpath.New("id"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("circuit_breaker").AtMapKey("num_buckets"), knownvalue.Int64Exact(10)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("request_headers").AtMapKey("remove"), knownvalue.Null()),
					stateValue(addr, "compression", knownvalue.Null()),
				},
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID},
			{Config: created, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateIdFunc: importID},
			{Config: created, ResourceName: addr, ImportState: true, ImportStateId: "edghtsrt_only", ExpectError: regexp.MustCompile(`Import a route as edge_id/route_id`)},
			{
				// Modules changed in place, removed (DELETE) and added.
				Config:           updated,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            routeModuleGone("ip_restriction"),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "ip_restriction", knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("circuit_breaker").AtMapKey("tripped_duration"), knownvalue.Int64Exact(30)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("compression").AtMapKey("enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("user_agent_filter").AtMapKey("allow"), knownvalue.Null()),
				},
			},
			{
				Config:           oidc,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check: resource.ComposeAggregateTestCheckFunc(
					routeModuleGone("request_headers", "traffic_policy", "compression", "user_agent_filter", "circuit_breaker"),
					// The server has the secret …
					func(s *terraform.State) error {
						rs := s.RootModule().Resources[addr]
						var m api.OIDCModule
						if err := routeModules(rs)(context.Background(), rs.Primary.ID, "oidc", &m); err != nil {
							return err
						}
						if m.ClientSecret != secret {
							return fmt.Errorf("the server's client_secret is %q", m.ClientSecret)
						}
						return nil
					},
					// … and no attribute of the state holds it.
					func(s *terraform.State) error {
						for name, rs := range s.RootModule().Resources {
							for k, v := range rs.Primary.Attributes {
								if strings.Contains(v, secret) {
									return fmt.Errorf("%s.%s holds the write-only secret", name, k)
								}
							}
						}
						return nil
					},
					oidcRules([]string{"alice@example.com", "bob@example.com"}, []string{"corp.example"}),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("client_secret"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("client_secret_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("client_secret_wo_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("cookie_prefix"), knownvalue.StringExact("")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("email_addresses"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("alice@example.com"), knownvalue.StringExact("bob@example.com")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("email_domains"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("corp.example")})),
				},
			},
			{
				// The e-mail rules changed in place; an omitted list is [] at the server.
				Config:           oidcRulesChanged,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            oidcRules([]string{"carol@example.com"}, []string{}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("email_addresses"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("carol@example.com")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("oidc").AtMapKey("email_domains"), knownvalue.Null()),
				},
			},
			// The CLI import cannot know the write-only secret's version.
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID, ImportStateVerifyIgnore: []string{"oidc.client_secret", "oidc.client_secret_wo_version"}},
			{
				Config:           saml,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            routeModuleGone("oidc"),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "oidc", knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("saml").AtMapKey("entity_id"), knownvalue.StringRegexp(regexp.MustCompile(`/saml/edghtsrt_[0-9A-Za-z]{27}$`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("saml").AtMapKey("assertion_consumer_service_url"), knownvalue.StringRegexp(regexp.MustCompile(`/saml/edghtsrt_[0-9A-Za-z]{27}/acs$`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("saml").AtMapKey("request_signing_certificate_pem"), knownvalue.StringRegexp(regexp.MustCompile(`^-----BEGIN CERTIFICATE-----`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("saml").AtMapKey("allow_idp_initiated"), knownvalue.Bool(true)),
				},
			},
			{
				// A new match in place; SAML removed, webhook verification with a sensitive secret.
				Config:           webhook,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            routeModuleGone("saml"),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "match", knownvalue.StringExact("/hooks")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("webhook_verification").AtMapKey("provider"), knownvalue.StringExact("GitHub")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("webhook_verification").AtMapKey("secret"), knownvalue.StringExact("whsec-kept-sensitive")),
					statecheck.ExpectSensitiveValue(addr, tfjsonpath.New("webhook_verification").AtMapKey("secret")),
				},
			},
			// An import does not put secrets in state (the first apply records a configured one).
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: importID, ImportStateVerifyIgnore: []string{"webhook_verification.secret"}},
			{
				Config: webhook + `
data "warren_https_edge_route" "test" {
  edge_id = warren_https_edge_route.test.edge_id
  id      = warren_https_edge_route.test.id
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.warren_https_edge_route.test", tfjsonpath.New("match"), knownvalue.StringExact("/hooks")),
					statecheck.ExpectKnownValue("data.warren_https_edge_route.test", tfjsonpath.New("webhook_verification").AtMapKey("secret"), knownvalue.StringExact("whsec-kept-sensitive")),
					statecheck.ExpectKnownValue("data.warren_https_edge_route.test", tfjsonpath.New("backend").AtMapKey("enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.warren_https_edge_route.test", tfjsonpath.New("oidc"), knownvalue.Null()),
				},
			},
			{
				Config:             webhook,
				Check:              deleteRouteBehindTerraform(env, addr),
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
				},
			},
			{Config: webhook, ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate)},
		},
	})
}

// deleteRouteBehindTerraform deletes the route at addr through the API.
func deleteRouteBehindTerraform(env *accEnv, addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		return env.client.HTTPSEdgeRoutes.Under(rs.Primary.Attributes["edge_id"]).Delete(context.Background(), rs.Primary.ID)
	}
}
