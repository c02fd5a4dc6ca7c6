package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*ipPolicyResource)(nil)
	_ resource.ResourceWithImportState = (*ipPolicyResource)(nil)
)

// NewIPPolicyResource is warren_ip_policy.
func NewIPPolicyResource() resource.Resource { return &ipPolicyResource{} }

type ipPolicyResource struct {
	client *client.Client
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

func (r *ipPolicyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *ipPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createResource(ctx, req, resp, "IP policy", func(ctx context.Context, m *ipPolicyModel) (*api.IPPolicy, error) {
		return r.client.IPPolicies.Create(ctx, api.IPPolicyCreate{Description: optional(m.Description), Metadata: optional(m.Metadata)})
	}, flattenIPPolicy)
}

func (r *ipPolicyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readResource(ctx, req, resp, "IP policy", ipPolicyID, r.client.IPPolicies.Get, flattenIPPolicy)
}

func (r *ipPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateResource(ctx, req, resp, "IP policy", func(ctx context.Context, plan, prior *ipPolicyModel) (*api.IPPolicy, error) {
		return r.client.IPPolicies.Update(ctx, prior.ID.ValueString(), api.IPPolicyUpdate{Description: optional(plan.Description), Metadata: optional(plan.Metadata)})
	}, flattenIPPolicy)
}

func (r *ipPolicyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteResource(ctx, req, resp, "IP policy", ipPolicyID, r.client.IPPolicies.Delete)
}

func (r *ipPolicyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
}

func ipPolicyID(m *ipPolicyModel) string { return m.ID.ValueString() }

func flattenIPPolicy(p *api.IPPolicy, m *ipPolicyModel) {
	m.ID = types.StringValue(p.ID)
	m.Description = types.StringValue(p.Description)
	m.Metadata = types.StringValue(p.Metadata)
	m.CreatedAt = types.StringValue(p.CreatedAt)
}
