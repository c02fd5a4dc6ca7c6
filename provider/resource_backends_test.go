package provider

import (
	"context"
	"errors"
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

// backendCase is the create → update in place → import → disappears cycle of one backend kind.
func backendCase(t *testing.T, env *accEnv, kind, prefix, v1, v2 string, first []statecheck.StateCheck, get func(context.Context, string) error, del func(context.Context, string) error) {
	addr := "warren_" + kind + ".test"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_"+kind, get),
		Steps: []resource.TestStep{
			{
				Config:            env.config("%s", v1),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: append(first, stateValue(addr, "id", idPattern(prefix))),
			},
			{Config: env.config("%s", v2), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate)},
			importSteps(env.config("%s", v2), addr)[0],
			importSteps(env.config("%s", v2), addr)[1],
			disappears(env.config("%s", v2), addr, del),
		},
	})
}

func TestAccBackendValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{Config: env.config("%s", body), PlanOnly: true, ExpectError: regexp.MustCompile(pattern)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`resource "warren_static_backend" "t" { address = "no-port" }`, `must be host:port`),
			step(`resource "warren_http_response_backend" "t" { status_code = 700 }`, `not a valid HTTP status`),
			step(`resource "warren_tunnel_group_backend" "t" { labels = { "a=b" = "c" } }`, `may not contain '='`),
			step(`resource "warren_weighted_backend" "t" { backends = { "bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue" = 10001 } }`, `outside 0..10000`),
			step(`resource "warren_failover_backend" "t" { backends = ["bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", "bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"] }`, `Duplicate List Value`),
		},
	})
}

// TestAccComposition builds what a real deployment looks like: a tunnel group and a static
// backend weighted together, a failover over that and a maintenance page, an IP policy with
// rules, and a reserved domain serving an uploaded certificate. Then it drops a child in place
// and checks that the API refuses to delete a backend still in use.
func TestAccComposition(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "shop.example.com")
	cfg := func(weights string) string {
		return env.config(`
resource "warren_tunnel_group_backend" "agents" {
  labels = { app = "shop" }
}

resource "warren_static_backend" "legacy" {
  address = "10.1.2.3:8080"
}

resource "warren_weighted_backend" "split" {
  description = "canary"
  backends    = %s
}

resource "warren_http_response_backend" "maintenance" {
  status_code = 503
  body        = "back soon"
}

resource "warren_failover_backend" "shop" {
  backends = [warren_weighted_backend.split.id, warren_http_response_backend.maintenance.id]
}

resource "warren_ip_policy" "office" {}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

resource "warren_ip_policy_rule" "blocked" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.128/25"
  action       = "deny"
}

resource "warren_tls_certificate" "shop" {
  certificate_pem = %q
  private_key_pem = %q
}

resource "warren_reserved_domain" "shop" {
  domain         = "shop.example.com"
  certificate_id = warren_tls_certificate.shop.id
}

data "warren_failover_backend" "shop" {
  id = warren_failover_backend.shop.id
}

data "warren_ip_policy_rules" "office" {
  filter     = "obj.ip_policy == \"${warren_ip_policy.office.id}\""
  depends_on = [warren_ip_policy_rule.office, warren_ip_policy_rule.blocked]
}
`, weights, pki.certPEM, pki.keyPEM)
	}
	both := `{ (warren_tunnel_group_backend.agents.id) = 90, (warren_static_backend.legacy.id) = 10 }`
	agentsOnly := `{ (warren_tunnel_group_backend.agents.id) = 100 }`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg(both),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs("data.warren_failover_backend.shop", tfjsonpath.New("backends").AtSliceIndex(0), "warren_weighted_backend.split", tfjsonpath.New("id"), compare.ValuesSame()),
					stateValue("warren_weighted_backend.split", "backends", knownvalue.MapSizeExact(2)),
					stateValue("data.warren_ip_policy_rules.office", "ip_policy_rules", knownvalue.ListSizeExact(2)),
					statecheck.CompareValuePairs("warren_reserved_domain.shop", tfjsonpath.New("certificate_id"), "warren_tls_certificate.shop", tfjsonpath.New("id"), compare.ValuesSame()),
				},
				Check: refusedWhileReferenced(env, "warren_static_backend.legacy", env.client.StaticBackends.Delete, "ERR_6502"),
			},
			{
				Config:           cfg(agentsOnly),
				ConfigPlanChecks: expectAction("warren_weighted_backend.split", plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue("warren_weighted_backend.split", "backends", knownvalue.MapSizeExact(1)),
				},
				Check: refusedWhileReferenced(env, "warren_tls_certificate.shop", env.client.TLSCertificates.Delete, "ERR_1966"),
			},
		},
	})
}

// refusedWhileReferenced tries to delete the object of addr through the API and expects the
// API to refuse with code, because other objects still reference it.
func refusedWhileReferenced(env *accEnv, addr string, del func(context.Context, string) error, code string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		err := del(context.Background(), s.RootModule().Resources[addr].Primary.ID)
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Code() != code {
			return fmt.Errorf("deleting %s: got %v, want %s", addr, err, code)
		}
		return nil
	}
}
