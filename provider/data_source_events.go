package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// eventDestinationDataSources are data.warren_event_destination and
// data.warren_event_destinations.
var eventDestinationDataSources = dataSources[api.EventDestination, eventDestinationModel]{
	name:         "event_destination",
	plural:       "event_destinations",
	describeOne:  "Reads an event destination by ID. Its secrets are not shown: the API never returns them.",
	describeAll:  "Lists the account's event destinations, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata` and `format`.",
	attributes:   eventDestinationDataAttributes,
	flattenDiags: flattenEventDestinationData,
}

// eventSubscriptionDataSources are data.warren_event_subscription and
// data.warren_event_subscriptions.
var eventSubscriptionDataSources = dataSources[api.EventSubscription, eventSubscriptionModel]{
	name:        "event_subscription",
	plural:      "event_subscriptions",
	describeOne: "Reads an event subscription by ID.",
	describeAll: "Lists the account's event subscriptions, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
	attributes:  eventSubscriptionDataAttributes,
	flatten:     flattenEventSubscription,
}

func eventDestinationDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the destination is for."),
		"metadata":    computedString("Arbitrary user data."),
		"format":      computedString("The format of the events, as given (`JSON` in any case)."),
		"target":      eventTargetDataAttribute(),
		"created_at":  computedString("When the destination was created (RFC 3339)."),
	}
}

func eventSubscriptionDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":     computedString("What the subscription is for."),
		"metadata":        computedString("Arbitrary user data."),
		"sources":         schema.SetAttribute{MarkdownDescription: "The event types delivered.", Computed: true, ElementType: types.StringType},
		"destination_ids": schema.SetAttribute{MarkdownDescription: "IDs of the event destinations the events go to.", Computed: true, ElementType: types.StringType},
		"created_at":      computedString("When the subscription was created (RFC 3339)."),
	}
}
