package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*staticBackendResource)(nil)
	_ resource.ResourceWithImportState = (*staticBackendResource)(nil)
)

// NewStaticBackendResource is warren_static_backend.
func NewStaticBackendResource() resource.Resource {
	return &staticBackendResource{crud[staticBackendModel, api.StaticBackend]{
		what: "static backend", flatten: flattenStaticBackend,
	}}
}

type staticBackendResource struct {
	crud[staticBackendModel, api.StaticBackend]
}

// staticBackendModel is the same in the resource and the data sources.
type staticBackendModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Address     types.String `tfsdk:"address"`
	TLS         types.Object `tfsdk:"tls"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

var staticTLSAttrTypes = map[string]attr.Type{"enabled": types.BoolType}

func (r *staticBackendResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_static_backend"
}

func (r *staticBackendResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A static backend forwards traffic to a fixed `host:port`.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("static backend"),
			"description": descriptionAttribute("backend"),
			"metadata":    metadataAttribute(),
			"address": schema.StringAttribute{
				MarkdownDescription: "Where traffic goes, `host:port`.",
				Required:            true,
				Validators:          []validator.String{validators.String("must be host:port", rules.StaticAddress)},
			},
			"tls": schema.SingleNestedAttribute{
				MarkdownDescription: "Whether the address is reached over TLS. Defaults to `{ enabled = false }`.",
				Optional:            true,
				Computed:            true,
				Default:             objectdefault.StaticValue(staticTLS(api.StaticTLS{})),
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{MarkdownDescription: "Use TLS towards the address.", Optional: true, Computed: true, Default: booldefault.StaticBool(false)},
				},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *staticBackendResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *staticBackendModel) (*api.StaticBackend, error) {
		return r.client.StaticBackends.Create(ctx, expandStaticBackend(m))
	})
}

func (r *staticBackendResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *staticBackendModel) (*api.StaticBackend, error) {
		return r.client.StaticBackends.Update(ctx, prior.ID.ValueString(), expandStaticBackend(plan))
	})
}

func expandStaticBackend(m *staticBackendModel) api.StaticBackendCreate {
	in := api.StaticBackendCreate{Description: clearable(m.Description), Metadata: clearable(m.Metadata), Address: optional(m.Address)}
	if !m.TLS.IsNull() && !m.TLS.IsUnknown() {
		if enabled, ok := m.TLS.Attributes()["enabled"].(types.Bool); ok {
			in.TLS = &api.StaticTLS{Enabled: enabled.ValueBool()}
		}
	}
	return in
}

func staticTLS(tls api.StaticTLS) types.Object {
	return types.ObjectValueMust(staticTLSAttrTypes, map[string]attr.Value{"enabled": types.BoolValue(tls.Enabled)})
}

func flattenStaticBackend(b *api.StaticBackend, m *staticBackendModel) {
	m.ID = types.StringValue(b.ID)
	m.Description = emptyAsNull(b.Description, m.Description)
	m.Metadata = emptyAsNull(b.Metadata, m.Metadata)
	m.Address = types.StringValue(b.Address)
	m.TLS = staticTLS(b.TLS)
	m.CreatedAt = types.StringValue(b.CreatedAt)
}
