package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure      = (*tunnelGroupBackendResource)(nil)
	_ resource.ResourceWithImportState    = (*tunnelGroupBackendResource)(nil)
	_ resource.ResourceWithValidateConfig = (*tunnelGroupBackendResource)(nil)
)

// NewTunnelGroupBackendResource is warren_tunnel_group_backend.
func NewTunnelGroupBackendResource() resource.Resource {
	return &tunnelGroupBackendResource{crud[tunnelGroupBackendModel, api.TunnelGroupBackend]{
		what: "tunnel group backend", flatten: flattenTunnelGroupBackend,
	}}
}

type tunnelGroupBackendResource struct {
	crud[tunnelGroupBackendModel, api.TunnelGroupBackend]
}

type tunnelGroupBackendModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Labels      types.Map    `tfsdk:"labels"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// tunnelGroupBackendDataModel adds the tunnels that match now: live state, which changes
// with every agent that connects, so only the data sources show it (in a resource every
// plan would find the object changed outside of Terraform).
type tunnelGroupBackendDataModel struct {
	tunnelGroupBackendModel
	Tunnels types.List `tfsdk:"tunnels"`
}

func (r *tunnelGroupBackendResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tunnel_group_backend"
}

func (r *tunnelGroupBackendResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A tunnel group backend balances traffic over the tunnels of connected agents (`warren-agent`) whose labels include its `labels`. The tunnels that match now are live state, shown by the data source `warren_tunnel_group_backend` (`tunnels`), not by this resource.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("tunnel group backend"),
			"description": descriptionAttribute("backend"),
			"metadata":    metadataAttribute(),
			"labels": schema.MapAttribute{
				MarkdownDescription: "Labels a tunnel must carry to serve this backend; at most 10, keys and values of 1 to 255 characters without `=`.",
				ElementType:         types.StringType,
				Optional:            true,
				Computed:            true,
				Default:             mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *tunnelGroupBackendResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m tunnelGroupBackendModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	checkRule(&resp.Diagnostics, "Invalid labels", !resp.Diagnostics.HasError() && !m.Labels.IsUnknown(), func() error {
		return rules.Labels(mapForRule(m.Labels, "known-later", stringOf))
	})
}

func (r *tunnelGroupBackendResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *tunnelGroupBackendModel) (*api.TunnelGroupBackend, error) {
		return r.client.TunnelGroupBackends.Create(ctx, expandTunnelGroupBackend(m))
	})
}

func (r *tunnelGroupBackendResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *tunnelGroupBackendModel) (*api.TunnelGroupBackend, error) {
		return r.client.TunnelGroupBackends.Update(ctx, prior.ID.ValueString(), expandTunnelGroupBackend(plan))
	})
}

func expandTunnelGroupBackend(m *tunnelGroupBackendModel) api.TunnelGroupBackendCreate {
	return api.TunnelGroupBackendCreate{Description: clearable(m.Description), Metadata: clearable(m.Metadata), Labels: stringMapOf(m.Labels)}
}

func flattenTunnelGroupBackend(b *api.TunnelGroupBackend, m *tunnelGroupBackendModel) {
	m.ID = types.StringValue(b.ID)
	m.Description = emptyAsNull(b.Description, m.Description)
	m.Metadata = emptyAsNull(b.Metadata, m.Metadata)
	m.Labels = stringMap(b.Labels)
	m.CreatedAt = types.StringValue(b.CreatedAt)
}

func flattenTunnelGroupBackendData(b *api.TunnelGroupBackend, m *tunnelGroupBackendDataModel) {
	flattenTunnelGroupBackend(b, &m.tunnelGroupBackendModel)
	tunnels := make([]string, len(b.Tunnels))
	for i, t := range b.Tunnels {
		tunnels[i] = t.ID
	}
	m.Tunnels = stringList(tunnels)
}
