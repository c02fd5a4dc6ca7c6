package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*eventSubscriptionResource)(nil)
	_ resource.ResourceWithImportState = (*eventSubscriptionResource)(nil)
)

// NewEventSubscriptionResource is warren_event_subscription.
func NewEventSubscriptionResource() resource.Resource {
	return &eventSubscriptionResource{crud[eventSubscriptionModel, api.EventSubscription]{
		what: "event subscription", flatten: flattenEventSubscription,
	}}
}

type eventSubscriptionResource struct {
	crud[eventSubscriptionModel, api.EventSubscription]
}

// eventSubscriptionModel is the same in the resource and the data sources.
type eventSubscriptionModel struct {
	ID             types.String `tfsdk:"id"`
	Description    types.String `tfsdk:"description"`
	Metadata       types.String `tfsdk:"metadata"`
	Sources        types.Set    `tfsdk:"sources"`
	DestinationIDs types.Set    `tfsdk:"destination_ids"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (r *eventSubscriptionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_event_subscription"
}

func (r *eventSubscriptionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An event subscription: the account's events of the given types are delivered to each of its destinations. A destination cannot be deleted while a subscription names it (`ERR_5112`). Destroying both, Terraform deletes the subscription first; but to remove one destination from a subscription and delete it, apply twice: first without it in `destination_ids`, then without the destination (Terraform would otherwise delete the destination before it updates the subscription).",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("event subscription"),
			"description": descriptionAttribute("subscription"),
			"metadata":    metadataAttribute(),
			"sources": schema.SetAttribute{
				MarkdownDescription: "The event types delivered; `[]` for none. Each one of " + eventTypesMarkdown() + ".",
				ElementType:         types.StringType,
				Required:            true,
				Validators:          []validator.Set{setvalidator.ValueStringsAre(validators.String("must be an event type, e.g. ip_policy_created.v0", rules.EventSourceType))},
			},
			"destination_ids": schema.SetAttribute{
				MarkdownDescription: "IDs of the event destinations (`ed_…`) the events go to; `[]` for none. A set: every destination gets every event, so their order means nothing.",
				ElementType:         types.StringType,
				Required:            true,
				Validators: []validator.Set{setvalidator.ValueStringsAre(validators.String("must be an event destination ID (ed_…)", func(s string) error {
					if !ids.Valid(s, ids.EventDestination) {
						return fmt.Errorf("%q is not an event destination ID (ed_…)", s)
					}
					return nil
				}))},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *eventSubscriptionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *eventSubscriptionModel) (*api.EventSubscription, error) {
		return r.client.EventSubscriptions.Create(ctx, api.EventSubscriptionCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata),
			Sources: eventSources(m.Sources), DestinationIDs: setStrings(m.DestinationIDs),
		})
	})
}

// Update sends both lists: each replaces the whole list on the server.
func (r *eventSubscriptionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *eventSubscriptionModel) (*api.EventSubscription, error) {
		return r.client.EventSubscriptions.Update(ctx, prior.ID.ValueString(), api.EventSubscriptionUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata),
			Sources: eventSources(plan.Sources), DestinationIDs: setStrings(plan.DestinationIDs),
		})
	})
}

// setStrings returns the elements of a known set of strings, sorted (a set has no order);
// never nil, so that an empty set is sent as [] and clears the list.
func setStrings(v types.Set) []string {
	out := []string{}
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok {
			out = append(out, s.ValueString())
		}
	}
	sort.Strings(out)
	return out
}

func eventSources(v types.Set) []api.EventSourceCreate {
	out := []api.EventSourceCreate{}
	for _, typ := range setStrings(v) {
		out = append(out, api.EventSourceCreate{Type: api.String(typ)})
	}
	return out
}

// stringSet returns a set value of strings, [] for none.
func stringSet(items []string) types.Set {
	return types.SetValueMust(types.StringType, stringList(items).Elements())
}

func flattenEventSubscription(s *api.EventSubscription, m *eventSubscriptionModel) {
	m.ID = types.StringValue(s.ID)
	m.Description = emptyAsNull(s.Description, m.Description)
	m.Metadata = emptyAsNull(s.Metadata, m.Metadata)
	sources := make([]string, len(s.Sources))
	for i, src := range s.Sources {
		sources[i] = src.Type
	}
	m.Sources = stringSet(sources)
	m.DestinationIDs = stringSet(refIDs(s.Destinations))
	m.CreatedAt = types.StringValue(s.CreatedAt)
}

// eventTypesMarkdown lists the event types the server knows (rules.EventSourceTypes), so the
// documentation generated from the schema is the server's list.
func eventTypesMarkdown() string {
	quoted := make([]string, len(rules.EventSourceTypes))
	for i, typ := range rules.EventSourceTypes {
		quoted[i] = "`" + typ + "`"
	}
	return strings.Join(quoted, ", ")
}
