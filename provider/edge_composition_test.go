package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// TestAccEdgeComposition builds what a real deployment of edges looks like: an HTTPS edge on
// a reserved domain serving an uploaded certificate, with mutual TLS, and three routes (a
// weighted backend behind an IP restriction and a circuit breaker; OIDC sign-in with a
// write-only secret; webhook verification with request headers), a TLS edge passing TLS
// upstream, and a TCP edge on a reserved address with a traffic policy. It checks what the
// server holds, that nothing in use can be deleted, and then drops a module in place.
func TestAccEdgeComposition(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "shop.example.com")
	const oidcSecret = "oidc-composition-secret-4711"
	cfg := func(apiRoute string) string {
		return env.config(`
resource "warren_tls_certificate" "shop" {
  certificate_pem = %q
  private_key_pem = %q
}

resource "warren_reserved_domain" "shop" {
  domain         = "shop.example.com"
  certificate_id = warren_tls_certificate.shop.id
}

resource "warren_reserved_domain" "mail" {
  domain = "mail.example.com"
}

resource "warren_reserved_addr" "db" {}

resource "warren_certificate_authority" "clients" {
  ca_pem = %q
}

resource "warren_tunnel_group_backend" "agents" {
  labels = { app = "shop" }
}

resource "warren_static_backend" "legacy" {
  address = "10.1.2.3:8080"
}

resource "warren_weighted_backend" "split" {
  backends = {
    (warren_tunnel_group_backend.agents.id) = 90
    (warren_static_backend.legacy.id)       = 10
  }
}

resource "warren_ip_policy" "office" {}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

resource "warren_https_edge" "shop" {
  hostports  = ["${warren_reserved_domain.shop.domain}:443"]
  mutual_tls = { certificate_authority_ids = [warren_certificate_authority.clients.id] }
}

%s

resource "warren_https_edge_route" "admin" {
  edge_id    = warren_https_edge.shop.id
  match_type = "path_prefix"
  match      = "/admin"
  backend    = { backend_id = warren_static_backend.legacy.id }
  oidc = {
    issuer                   = "https://login.example.com"
    client_id                = "shop-admin"
    client_secret_wo         = %q
    client_secret_wo_version = 1
  }
}

resource "warren_https_edge_route" "hooks" {
  edge_id    = warren_https_edge.shop.id
  match_type = "exact_path"
  match      = "/hooks/github"
  backend    = { backend_id = warren_tunnel_group_backend.agents.id }
  webhook_verification = {
    provider = "github"
    secret   = "whsec-composition"
  }
  request_headers = {
    add = { "X-Verified-By" = "warren" }
  }
}

resource "warren_tls_edge" "mail" {
  hostports       = ["${warren_reserved_domain.mail.domain}:443"]
  backend         = { backend_id = warren_static_backend.legacy.id }
  tls_termination = { terminate_at = "upstream" }
}

resource "warren_tcp_edge" "db" {
  hostports = [warren_reserved_addr.db.addr]
  backend   = { backend_id = warren_static_backend.legacy.id }
  traffic_policy = {
    value = jsonencode({
      on_tcp_connect = [{
        name        = "office only"
        expressions = ["!inCidrRanges(conn.client_ip, ['198.51.100.0/24'])"]
        actions     = [{ type = "deny" }]
      }]
    })
  }
}

data "warren_https_edge" "shop" {
  id         = warren_https_edge.shop.id
  depends_on = [warren_https_edge_route.api, warren_https_edge_route.admin, warren_https_edge_route.hooks]
}
`, pki.certPEM, pki.keyPEM, pki.caPEM, apiRoute, oidcSecret)
	}
	apiRoute := func(circuitBreaker string) string {
		return fmt.Sprintf(`
resource "warren_https_edge_route" "api" {
  edge_id        = warren_https_edge.shop.id
  match_type     = "path_prefix"
  match          = "/"
  backend        = { backend_id = warren_weighted_backend.split.id }
  ip_restriction = { ip_policy_ids = [warren_ip_policy.office.id] }
  %s
}`, circuitBreaker)
	}
	routeOf := func(s *terraform.State, addr string) (edgeID, id string) {
		rs := s.RootModule().Resources[addr]
		return rs.Primary.Attributes["edge_id"], rs.Primary.ID
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg(apiRoute(`circuit_breaker = { error_threshold_percentage = 0.25 }`)),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue("data.warren_https_edge.shop", "routes", knownvalue.ListSizeExact(3)),
					stateValue("warren_tls_edge.mail", "tls_termination", knownvalue.ObjectPartial(map[string]knownvalue.Check{"terminate_at": knownvalue.StringExact("upstream")})),
					stateValue("warren_https_edge_route.admin", "oidc", knownvalue.ObjectPartial(map[string]knownvalue.Check{"client_secret": knownvalue.Null()})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					// The write-only secret reached the server and no state attribute holds it.
					func(s *terraform.State) error {
						edgeID, id := routeOf(s, "warren_https_edge_route.admin")
						var m api.OIDCModule
						if err := env.client.HTTPSEdgeRoutes.Under(edgeID).GetModule(context.Background(), id, "oidc", &m); err != nil {
							return err
						}
						if m.ClientSecret != oidcSecret {
							return fmt.Errorf("the server's OIDC client_secret is %q", m.ClientSecret)
						}
						for name, rs := range s.RootModule().Resources {
							for k, v := range rs.Primary.Attributes {
								if strings.Contains(v, oidcSecret) {
									return fmt.Errorf("%s.%s holds the write-only secret", name, k)
								}
							}
						}
						return nil
					},
					// The server keeps the header name in its lowercase form.
					func(s *terraform.State) error {
						edgeID, id := routeOf(s, "warren_https_edge_route.hooks")
						var m api.HeadersModule
						if err := env.client.HTTPSEdgeRoutes.Under(edgeID).GetModule(context.Background(), id, "request_headers", &m); err != nil {
							return err
						}
						if m.Add["x-verified-by"] != "warren" {
							return fmt.Errorf("request_headers.add = %v", m.Add)
						}
						return nil
					},
					// What the edges use cannot be deleted behind Terraform's back.
					refusedWhileReferenced(env, "warren_reserved_domain.shop", env.client.ReservedDomains.Delete, "ERR_446"),
					refusedWhileReferenced(env, "warren_weighted_backend.split", env.client.WeightedBackends.Delete, "ERR_6502"),
					refusedWhileReferenced(env, "warren_static_backend.legacy", env.client.StaticBackends.Delete, "ERR_6502"),
					refusedWhileReferenced(env, "warren_ip_policy.office", env.client.IPPolicies.Delete, "ERR_1420"),
					refusedWhileReferenced(env, "warren_certificate_authority.clients", env.client.CertificateAuthorities.Delete, "ERR_215"),
					refusedWhileReferenced(env, "warren_tls_certificate.shop", env.client.TLSCertificates.Delete, "ERR_1966"),
				),
			},
			{
				// Dropping the circuit breaker updates the route in place and removes the module.
				Config:           cfg(apiRoute("")),
				ConfigPlanChecks: expectAction("warren_https_edge_route.api", plancheck.ResourceActionUpdate),
				Check: func(s *terraform.State) error {
					edgeID, id := routeOf(s, "warren_https_edge_route.api")
					err := env.client.HTTPSEdgeRoutes.Under(edgeID).GetModule(context.Background(), id, "circuit_breaker", &api.CircuitBreakerModule{})
					if !client.IsNotFound(err) {
						return fmt.Errorf("circuit_breaker after removal: %v, want 404", err)
					}
					return nil
				},
			},
		},
	})
}
