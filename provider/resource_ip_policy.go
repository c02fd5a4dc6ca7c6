package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

var (
	_ resource.ResourceWithConfigure   = (*ipPolicyResource)(nil)
	_ resource.ResourceWithImportState = (*ipPolicyResource)(nil)
)

// NewIPPolicyResource is warren_ip_policy.
func NewIPPolicyResource() resource.Resource {
	return &ipPolicyResource{crud[ipPolicyModel, api.IPPolicy]{
		what: "IP policy", flatten: flattenIPPolicy,
	}}
}

type ipPolicyResource struct {
	crud[ipPolicyModel, api.IPPolicy]
}

// ipPolicyModel is the same in the resource and the data sources.
type ipPolicyModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *ipPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ip_policy"
}

func (r *ipPolicyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An IP policy: a set of `warren_ip_policy_rule`s that IP restrictions and edge modules apply. Deleting it deletes its rules; it cannot be deleted while an IP restriction uses it.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("IP policy"),
			"description": descriptionAttribute("IP policy"),
			"metadata":    metadataAttribute(),
			"created_at":  createdAtAttribute(),
		},
	}
}

func (r *ipPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *ipPolicyModel) (*api.IPPolicy, error) {
		return r.client.IPPolicies.Create(ctx, api.IPPolicyCreate{Description: optional(m.Description), Metadata: optional(m.Metadata)})
	})
}

func (r *ipPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *ipPolicyModel) (*api.IPPolicy, error) {
		return r.client.IPPolicies.Update(ctx, prior.ID.ValueString(), api.IPPolicyUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

func flattenIPPolicy(p *api.IPPolicy, m *ipPolicyModel) {
	m.ID = types.StringValue(p.ID)
	m.Description = emptyAsNull(p.Description, m.Description)
	m.Metadata = emptyAsNull(p.Metadata, m.Metadata)
	m.CreatedAt = types.StringValue(p.CreatedAt)
}
