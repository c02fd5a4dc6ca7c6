package provider

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
)

// TestAccEventDelivery applies a destination and a subscription, then creates an IP policy in
// a second apply: the server delivers ip_policy_created.v0 with that policy to the local fake
// of the data stream API, signed with the destination's write-only key.
func TestAccEventDelivery(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey("AKIAACCTEST", "acc-secret-5e1d")
	env := newAccEnv(t, func(o *apiserver.Options) {
		o.Events.Sender = delivery.New(delivery.Options{Endpoints: fake.Endpoints()})
	})
	const subscribed = `
resource "warren_event_destination" "audit" {
  format = "JSON"
  target = {
    data_stream = {
      stream_arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/audit"
      auth = {
        creds = {
          access_key_id                = "AKIAACCTEST"
          secret_access_key_wo         = "acc-secret-5e1d"
          secret_access_key_wo_version = 1
        }
      }
    }
  }
}

resource "warren_event_subscription" "audit" {
  sources         = ["ip_policy_created.v0"]
  destination_ids = [warren_event_destination.audit.id]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{Config: env.config(subscribed)},
			{
				Config: env.config(subscribed + `
resource "warren_ip_policy" "office" {
  description = "office"
}
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("warren_ip_policy.office", plancheck.ResourceActionCreate)}},
				Check: func(s *terraform.State) error {
					var ev struct {
						EventType string `json:"event_type"`
						Object    struct {
							ID          string `json:"id"`
							Description string `json:"description"`
						} `json:"object"`
					}
					if err := json.Unmarshal(fake.Kinesis.WaitFor(t, 1)[0], &ev); err != nil {
						return err
					}
					policy := s.RootModule().Resources["warren_ip_policy.office"].Primary.ID
					if ev.EventType != "ip_policy_created.v0" || ev.Object.ID != policy || ev.Object.Description != "office" {
						return fmt.Errorf("the data stream received %+v, want ip_policy_created.v0 of %s", ev, policy)
					}
					if key := fake.RequestsOf("PutRecords")[0].AccessKeyID; key != "AKIAACCTEST" {
						return fmt.Errorf("signed with %s", key)
					}
					return nil
				},
			},
		},
	})
}
