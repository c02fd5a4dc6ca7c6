package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

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
