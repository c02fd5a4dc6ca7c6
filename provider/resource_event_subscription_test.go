package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// TestDocsListEventTypes: the committed documentation of warren_event_subscription lists
// every event type the server accepts (the schema builds the list from rules.EventSourceTypes;
// `make docs` writes it), and sends no one to a file users do not have.
func TestDocsListEventTypes(t *testing.T) {
	doc, err := os.ReadFile("../docs/resources/event_subscription.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), eventTypesMarkdown()) {
		t.Errorf("docs/resources/event_subscription.md does not list the event types %v: run 'make docs'", rules.EventSourceTypes)
	}
	if strings.Contains(string(doc), "details.md") {
		t.Error("docs/resources/event_subscription.md refers to details.md")
	}
}

// eventDestinations are two destinations for the subscription tests.
const eventDestinations = `
resource "warren_event_destination" "a" {
  format = "JSON"
  target = { observability = { api_key = "dd-a" } }
}

resource "warren_event_destination" "b" {
  format = "JSON"
  target = { log_group = {
    log_group_arn = "arn:aws:logs:eu-west-1:123456789012:log-group:warren"
    auth          = { role = { role_arn = "arn:aws:iam::123456789012:role/warren" } }
  } }
}
`

// TestAccEventSubscription: created with one source and destination; sources and
// destinations replaced in place (and the order of a set is no change); a destination it
// names cannot be deleted (ERR_5112), while Terraform deletes the subscription first;
// import; disappears.
func TestAccEventSubscription(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_event_subscription.test"
	cfg := func(description, sources, destinations string) string {
		return env.config(eventDestinations+`
resource "warren_event_subscription" "test" {
  description     = %q
  sources         = [%s]
  destination_ids = [%s]
}`, description, sources, destinations)
	}
	one := cfg("audit", `"ip_policy_created.v0"`, `warren_event_destination.a.id`)
	withoutB := env.config("%s"+`
resource "warren_event_subscription" "test" {
  description     = "audit"
  sources         = []
  destination_ids = [warren_event_destination.a.id]
}`, eventDestinations[:strings.Index(eventDestinations, `resource "warren_event_destination" "b"`)])
	two := cfg("audit", `"ip_policy_created.v0", "api_key_deleted.v0"`, `warren_event_destination.a.id, warren_event_destination.b.id`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkDestroyed("warren_event_subscription", getter(env.client.EventSubscriptions.Get)),
			checkDestroyed("warren_event_destination", getter(env.client.EventDestinations.Get)),
		),
		Steps: []resource.TestStep{
			{
				Config:           one,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("esb_")),
					stateValue(addr, "sources", knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("ip_policy_created.v0")})),
					stateValue(addr, "destination_ids", knownvalue.SetExact([]knownvalue.Check{idPattern("ed_")})),
				},
			},
			{
				Config:           two,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "sources", knownvalue.SetSizeExact(2)),
					stateValue(addr, "destination_ids", knownvalue.SetSizeExact(2)),
				},
				Check: func(s *terraform.State) error {
					sub, err := env.client.EventSubscriptions.Get(context.Background(), s.RootModule().Resources[addr].Primary.ID)
					if err != nil {
						return err
					}
					if len(sub.Sources) != 2 || len(sub.Destinations) != 2 {
						return fmt.Errorf("the API holds %d sources and %d destinations", len(sub.Sources), len(sub.Destinations))
					}
					// A destination the subscription names cannot be deleted.
					err = env.client.EventDestinations.Delete(context.Background(), s.RootModule().Resources["warren_event_destination.b"].Primary.ID)
					if err == nil || !strings.Contains(err.Error(), "ERR_5112") {
						return fmt.Errorf("deleting a named destination: %v, want ERR_5112", err)
					}
					return nil
				},
			},
			{
				Config:           cfg("audit", `"api_key_deleted.v0", "ip_policy_created.v0"`, `warren_event_destination.b.id, warren_event_destination.a.id`),
				ConfigPlanChecks: emptyPlan(),
			},
			importSteps(two, addr)[0],
			importSteps(two, addr)[1],
			{
				// Destination b removed from the configuration while the subscription still
				// names it: Terraform destroys b before it updates the subscription, and the
				// server refuses, saying why.
				Config:      withoutB,
				ExpectError: regexp.MustCompile(`(?s)ERR_5112.*is\s+still\s+used\s+by`),
			},
			{
				// The way: drop it from the subscription first …
				Config:           cfg("audit", ``, `warren_event_destination.a.id`),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "sources", knownvalue.SetExact(nil)),
				},
			},
			{
				// … then delete it.
				Config:           withoutB,
				ConfigPlanChecks: expectAction("warren_event_destination.b", plancheck.ResourceActionDestroy),
			},
			disappears(one, addr, env.client.EventSubscriptions.Delete),
		},
	})
}

func TestAccEventSubscriptionValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(sources, destinations, pattern string) resource.TestStep {
		return resource.TestStep{
			Config: env.config(`
resource "warren_event_subscription" "t" {
  sources         = [%s]
  destination_ids = [%s]
}`, sources, destinations),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(pattern),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`"ip_policy_made.v0"`, ``, `(?s)Invalid\s+event\s+type\s+"ip_policy_made.v0"`),
			step(`"reserved_domain_created.v0"`, ``, `(?s)Invalid\s+event\s+type\s+"reserved_domain_created.v0".\s+Did\s+you\s+mean\s+"domain_created.v0"\?`),
			step(`"ip_policy_created.v0"`, `"ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"`, `(?s)is\s+not\s+an\s+event\s+destination\s+ID`),
			step(`"ip_policy_created.v0", null`, ``, `(?s)null`),
		},
	})
}
