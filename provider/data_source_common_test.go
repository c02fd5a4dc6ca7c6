package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccDataSources reads every object kind back through its data source (by ID, and the
// service user by name) and through its list data source with a filter.
func TestAccDataSources(t *testing.T) {
	env := newAccEnv(t)
	key := newPublicKey(t)
	cfg := env.config(`
resource "warren_service_user" "bot" {
  name = "reader-bot"
}

resource "warren_api_key" "k" {
  description = "wanted"
  owner_id    = warren_service_user.bot.id
}

resource "warren_api_key" "other" {
  description = "unwanted"
}

resource "warren_tunnel_credential" "c" {
  description = "wanted"
  acl         = ["bind:x.example.com"]
}

resource "warren_ssh_credential" "s" {
  public_key = %q
  acl        = ["bind:ssh.example.com"]
}

resource "warren_ssh_certificate_authority" "ca" {
  description      = "wanted"
  private_key_type = "ecdsa"
}

data "warren_service_user" "by_name" {
  name = warren_service_user.bot.name
}

data "warren_service_user" "by_id" {
  id = warren_service_user.bot.id
}

data "warren_api_key" "k" {
  id = warren_api_key.k.id
}

data "warren_tunnel_credential" "c" {
  id = warren_tunnel_credential.c.id
}

data "warren_ssh_credential" "s" {
  id = warren_ssh_credential.s.id
}

data "warren_ssh_certificate_authority" "ca" {
  id = warren_ssh_certificate_authority.ca.id
}

data "warren_api_keys" "wanted" {
  filter     = "obj.description == \"wanted\""
  depends_on = [warren_api_key.k, warren_api_key.other]
}

data "warren_tunnel_credentials" "bound" {
  filter     = "\"bind:x.example.com\" in obj.acl"
  depends_on = [warren_tunnel_credential.c]
}

data "warren_ssh_credentials" "all" {
  depends_on = [warren_ssh_credential.s]
}

data "warren_ssh_certificate_authorities" "wanted" {
  filter     = "obj.description == \"wanted\""
  depends_on = [warren_ssh_certificate_authority.ca]
}

data "warren_service_users" "recent" {
  filter     = "obj.created_at > timestamp(time.now).subtract(\"1d\")"
  depends_on = [warren_service_user.bot]
}
`, key)
	same := func(a, attrA, b, attrB string) statecheck.StateCheck {
		return statecheck.CompareValuePairs(a, tfjsonpath.New(attrA), b, tfjsonpath.New(attrB), compare.ValuesSame())
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				same("data.warren_service_user.by_name", "id", "warren_service_user.bot", "id"),
				same("data.warren_service_user.by_id", "name", "warren_service_user.bot", "name"),
				stateValue("data.warren_service_user.by_id", "active", knownvalue.Bool(true)),
				same("data.warren_api_key.k", "owner_id", "warren_service_user.bot", "id"),
				stateValue("data.warren_api_key.k", "description", knownvalue.StringExact("wanted")),
				stateValue("data.warren_tunnel_credential.c", "acl", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("bind:x.example.com")})),
				stateValue("data.warren_ssh_credential.s", "public_key", knownvalue.StringExact(key)),
				stateValue("data.warren_ssh_certificate_authority.ca", "elliptic_curve", knownvalue.StringExact("p256")),
				same("data.warren_ssh_certificate_authority.ca", "public_key", "warren_ssh_certificate_authority.ca", "public_key"),
				stateValue("data.warren_api_keys.wanted", "api_keys", knownvalue.ListSizeExact(1)),
				statecheck.ExpectKnownValue("data.warren_api_keys.wanted", tfjsonpath.New("api_keys").AtSliceIndex(0).AtMapKey("description"), knownvalue.StringExact("wanted")),
				stateValue("data.warren_tunnel_credentials.bound", "tunnel_credentials", knownvalue.ListSizeExact(1)),
				stateValue("data.warren_ssh_credentials.all", "ssh_credentials", knownvalue.ListSizeExact(1)),
				stateValue("data.warren_ssh_certificate_authorities.wanted", "ssh_certificate_authorities", knownvalue.ListSizeExact(1)),
				stateValue("data.warren_service_users.recent", "service_users", knownvalue.ListSizeExact(1)),
			},
		}},
	})
}

func TestAccDataSourceErrors(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config:      env.config(`data "warren_api_key" "x" { id = "ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue" }`),
				ExpectError: regexp.MustCompile(`404`),
			},
			{
				Config:      env.config(`data "warren_api_keys" "x" { filter = "obj.nope == 1" }`),
				ExpectError: regexp.MustCompile(`ERR_250`),
			},
			{
				Config:      env.config(`data "warren_service_user" "x" { name = "nobody" }`),
				ExpectError: regexp.MustCompile(`No service_user has name "nobody"`),
			},
			{
				Config:      env.config(`data "warren_service_user" "x" {}`),
				ExpectError: regexp.MustCompile(`Missing Attribute Configuration`),
			},
		},
	})
}
