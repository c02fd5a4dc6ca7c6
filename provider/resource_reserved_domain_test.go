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

func TestAccReservedDomain(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_reserved_domain.test"
	pki := newTestPKI(t, "app.example.com")
	cfg := func(domain, extra string) string {
		return env.config(`
resource "warren_tls_certificate" "app" {
  certificate_pem = %q
  private_key_pem = %q
}

resource "warren_reserved_domain" "test" {
  domain = %q
  %s
}`, pki.certPEM, pki.keyPEM, domain, extra)
	}
	managed := cfg("app.example.com", `description = "app"`)
	uploaded := cfg("app.example.com", `description = "app"
  certificate_id = warren_tls_certificate.app.id`)
	pinned := cfg("app.example.com", `description = "app"
  resolves_to = ["eu", "us"]
  certificate_management_policy = {
    private_key_type = "rsa"
  }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_reserved_domain", getter(env.client.ReservedDomains.Get)),
		Steps: []resource.TestStep{
			{
				// A domain you bring gets the default managed certificate and a CNAME target.
				Config:           managed,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("rd_")),
					stateValue(addr, "certificate_id", knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("certificate_management_policy").AtMapKey("authority"), knownvalue.StringExact("letsencrypt")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("certificate_management_status").AtMapKey("provisioning_job").AtMapKey("msg"), knownvalue.StringExact("Managed certificate provisioning in progress.")),
					stateValue(addr, "cname_target", knownvalue.StringRegexp(regexp.MustCompile(`\.cname\.`))),
					stateValue(addr, "acme_challenge_cname_target", knownvalue.Null()),
					stateValue(addr, "resolves_to", knownvalue.Null()),
				},
			},
			importSteps(managed, addr)[0],
			importSteps(managed, addr)[1],
			{
				// An uploaded certificate replaces the managed one, in place.
				Config:           uploaded,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(addr, tfjsonpath.New("certificate_id"), "warren_tls_certificate.app", tfjsonpath.New("id"), compare.ValuesSame()),
					stateValue(addr, "certificate_management_policy", knownvalue.Null()),
					stateValue(addr, "certificate_management_status", knownvalue.Null()),
				},
			},
			{
				// And a policy replaces the certificate again; resolves_to pins regions.
				Config:           pinned,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "certificate_id", knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("certificate_management_policy").AtMapKey("private_key_type"), knownvalue.StringExact("rsa")),
					stateValue(addr, "resolves_to", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("eu"), knownvalue.StringExact("us")})),
				},
			},
			{
				// A difference in case alone is no change (and omitting the policy keeps the
				// server's): the state keeps its spelling.
				Config:            cfg("APP.Example.com.", `description = "app"`),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionNoop),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "domain", knownvalue.StringExact("app.example.com"))},
			},
			{
				Config:           cfg("www.example.com", `description = "app"`),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
			},
			disappears(cfg("www.example.com", `description = "app"`), addr, env.client.ReservedDomains.Delete),
		},
	})
}

// TestAccReservedDomainMixedCase creates a domain written in mixed case: the API stores it
// lowercased, and the plan after apply is still empty.
func TestAccReservedDomainMixedCase(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_reserved_domain.test"
	cfg := env.config(`resource "warren_reserved_domain" "test" { domain = "Shop.Example.ORG." }`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_reserved_domain", getter(env.client.ReservedDomains.Get)),
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate)},
			{
				Config: cfg + `
data "warren_reserved_domain" "by_name" {
  domain = "shop.example.org"
}`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs("data.warren_reserved_domain.by_name", tfjsonpath.New("id"), addr, tfjsonpath.New("id"), compare.ValuesSame()),
					stateValue("data.warren_reserved_domain.by_name", "domain", knownvalue.StringExact("shop.example.org")),
				},
			},
		},
	})
}

func TestAccReservedDomainValidation(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: env.config(`resource "warren_reserved_domain" "t" {
  domain                        = "a.example.com"
  certificate_id                = "cert_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  certificate_management_policy = {}
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid Attribute\s+Combination`),
			},
			{
				Config:      env.config(`resource "warren_reserved_domain" "t" { domain = "a_b.example.com" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`ERR_438|underscore`),
			},
			{
				Config:      env.config(`resource "warren_reserved_domain" "t" { domain = "localhost" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?i)fully\s+qualified`),
			},
			{
				Config: env.config(`resource "warren_reserved_domain" "t" {
  domain      = "b.example.com"
  resolves_to = ["eu", "eu"]
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Duplicate List Value`),
			},
		},
	})
}

func TestAccReservedAddr(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_reserved_addr.test"
	cfg := func(region, description string) string {
		return env.config(`
resource "warren_reserved_addr" "test" {
  region      = %q
  description = %q
}

data "warren_reserved_addrs" "all" {
  depends_on = [warren_reserved_addr.test]
}`, region, description)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_reserved_addr", getter(env.client.ReservedAddrs.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg("eu", "ssh"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ra_")),
					stateValue(addr, "addr", knownvalue.StringRegexp(regexp.MustCompile(`^tcp\..+:\d+$`))),
					stateValue(addr, "region", knownvalue.StringExact("eu")),
					stateValue("data.warren_reserved_addrs.all", "reserved_addrs", knownvalue.ListSizeExact(1)),
				},
			},
			{Config: cfg("eu", "ssh bastion"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate)},
			importSteps(cfg("eu", "ssh bastion"), addr)[0],
			importSteps(cfg("eu", "ssh bastion"), addr)[1],
			{Config: cfg("us", "ssh bastion"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			disappears(cfg("us", "ssh bastion"), addr, env.client.ReservedAddrs.Delete),
		},
	})
}
