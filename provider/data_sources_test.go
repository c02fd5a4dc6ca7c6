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

// TestAccEventDataSources reads a destination and a subscription back by ID and through the
// list data sources with a filter; a destination's secrets are not shown.
func TestAccEventDataSources(t *testing.T) {
	env := newAccEnv(t)
	cfg := env.config(`
resource "warren_event_destination" "d" {
  description = "wanted"
  format      = "json"
  target = { observability = {
    api_key_wo         = "dd-secret"
    api_key_wo_version = 1
    service            = "warren"
  } }
}

resource "warren_event_destination" "other" {
  format = "JSON"
  target = { data_stream = {
    stream_arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/warren"
    auth       = { creds = { access_key_id = "AKIAEXAMPLE", secret_access_key = "s3cret" } }
  } }
}

resource "warren_event_subscription" "s" {
  description     = "wanted"
  sources         = ["ip_policy_created.v0"]
  destination_ids = [warren_event_destination.d.id]
}

data "warren_event_destination" "d" {
  id = warren_event_destination.d.id
}

data "warren_event_destination" "other" {
  id = warren_event_destination.other.id
}

data "warren_event_subscription" "s" {
  id = warren_event_subscription.s.id
}

data "warren_event_destinations" "json" {
  filter     = "obj.format == \"json\""
  depends_on = [warren_event_destination.d, warren_event_destination.other]
}

data "warren_event_subscriptions" "wanted" {
  filter     = "obj.description == \"wanted\""
  depends_on = [warren_event_subscription.s]
}
`)
	const d, other = "data.warren_event_destination.d", "data.warren_event_destination.other"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs(d, tfjsonpath.New("id"), "warren_event_destination.d", tfjsonpath.New("id"), compare.ValuesSame()),
				stateValue(d, "format", knownvalue.StringExact("json")),
				stateValue(d, "description", knownvalue.StringExact("wanted")),
				stateValue(d, "target", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"observability": knownvalue.ObjectExact(map[string]knownvalue.Check{
						"service": knownvalue.StringExact("warren"), "tags": knownvalue.Null(), "site": knownvalue.Null(),
					}),
					"delivery_stream": knownvalue.Null(), "data_stream": knownvalue.Null(), "log_group": knownvalue.Null(), "cloud_logs_ingestion": knownvalue.Null(),
				})),
				targetValue(other, knownvalue.ObjectExact(map[string]knownvalue.Check{"access_key_id": knownvalue.StringExact("AKIAEXAMPLE")}), "data_stream", "auth", "creds"),
				stateValue("data.warren_event_subscription.s", "sources", knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("ip_policy_created.v0")})),
				statecheck.CompareValuePairs("data.warren_event_subscription.s", tfjsonpath.New("destination_ids"), "warren_event_subscription.s", tfjsonpath.New("destination_ids"), compare.ValuesSame()),
				stateValue("data.warren_event_destinations.json", "event_destinations", knownvalue.ListSizeExact(1)),
				statecheck.CompareValuePairs("data.warren_event_destinations.json", tfjsonpath.New("event_destinations").AtSliceIndex(0).AtMapKey("id"), "warren_event_destination.d", tfjsonpath.New("id"), compare.ValuesSame()),
				stateValue("data.warren_event_subscriptions.wanted", "event_subscriptions", knownvalue.ListSizeExact(1)),
			},
		}},
	})
}
