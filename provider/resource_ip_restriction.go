package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure   = (*ipRestrictionResource)(nil)
	_ resource.ResourceWithImportState = (*ipRestrictionResource)(nil)
)

// NewIPRestrictionResource is warren_ip_restriction.
func NewIPRestrictionResource() resource.Resource {
	return &ipRestrictionResource{crud[ipRestrictionModel, api.IPRestriction]{
		what: "IP restriction", flatten: flattenIPRestriction,
	}}
}

type ipRestrictionResource struct {
	crud[ipRestrictionModel, api.IPRestriction]
}

// ipRestrictionModel is the same in the resource and the data sources.
type ipRestrictionModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Enforced    types.Bool   `tfsdk:"enforced"`
	Type        types.String `tfsdk:"type"`
	IPPolicyIDs types.List   `tfsdk:"ip_policy_ids"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *ipRestrictionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ip_restriction"
}

func (r *ipRestrictionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An IP restriction applies IP policies to one kind of access to the account. An account has at most one restriction per type.\n\n" +
			"**What the server enforces today.** A restriction of type `api` is enforced by the server on its own API: with `enforced = true`, a request from an address the restriction's policies do not allow is refused (403 `ERR_220`); with `enforced = false` (the default) the restriction is recorded and violations are only logged, which is the way to try a policy before it can lock anyone out. The server refuses (400 `ERR_220`) to enforce a restriction, or to change the rules of its policies, in a way that would refuse the address making the change, so enforce it from an allowed address; give the restriction `depends_on` its allow rules, so that they exist first and are destroyed last. Behind a reverse proxy the server needs `--trusted-proxies` to see client addresses; the operator endpoints under `/_admin/` are never restricted. A restriction of type `endpoints` applies the same way to the traffic of the account's edges and agent endpoints (a refused visitor gets 403 over HTTP; a TLS or TCP connection is closed), and one of type `agent` to agents connecting (`warren-agent`); `enforced = false` only logs, as for `api`. Type `dashboard` is recorded only: this server runs no dashboard.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("IP restriction"),
			"description": descriptionAttribute("restriction"),
			"metadata":    metadataAttribute(),
			"enforced": schema.BoolAttribute{
				MarkdownDescription: "Whether the restriction is enforced. `false` (the default) records it and only logs violations; see above for which types the server enforces today.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"type": schema.StringAttribute{
				MarkdownDescription: "What the restriction applies to: `dashboard`, `api`, `agent` or `endpoints`. Changing it forces a new restriction.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.OneOf(rules.IPRestrictionTypes...)},
			},
			"ip_policy_ids": schema.ListAttribute{
				MarkdownDescription: "IDs of the IP policies that apply; at least one.",
				ElementType:         types.StringType,
				Required:            true,
				Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *ipRestrictionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *ipRestrictionModel) (*api.IPRestriction, error) {
		return r.client.IPRestrictions.Create(ctx, api.IPRestrictionCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata), Enforced: m.Enforced.ValueBoolPointer(),
			Type: optional(m.Type), IPPolicyIDs: stringsOf(m.IPPolicyIDs),
		})
	})
}

func (r *ipRestrictionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *ipRestrictionModel) (*api.IPRestriction, error) {
		return r.client.IPRestrictions.Update(ctx, prior.ID.ValueString(), api.IPRestrictionUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata), Enforced: plan.Enforced.ValueBoolPointer(),
			IPPolicyIDs: stringsOf(plan.IPPolicyIDs),
		})
	})
}

func flattenIPRestriction(x *api.IPRestriction, m *ipRestrictionModel) {
	m.ID = types.StringValue(x.ID)
	m.Description = emptyAsNull(x.Description, m.Description)
	m.Metadata = emptyAsNull(x.Metadata, m.Metadata)
	m.Enforced = types.BoolValue(x.Enforced)
	m.Type = types.StringValue(x.Type)
	policyIDs := make([]string, len(x.IPPolicies))
	for i, p := range x.IPPolicies {
		policyIDs[i] = p.ID
	}
	m.IPPolicyIDs = stringList(policyIDs)
	m.CreatedAt = types.StringValue(x.CreatedAt)
}
