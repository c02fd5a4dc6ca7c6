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
	_ resource.ResourceWithConfigure      = (*weightedBackendResource)(nil)
	_ resource.ResourceWithImportState    = (*weightedBackendResource)(nil)
	_ resource.ResourceWithValidateConfig = (*weightedBackendResource)(nil)
)

// NewWeightedBackendResource is warren_weighted_backend.
func NewWeightedBackendResource() resource.Resource {
	return &weightedBackendResource{crud[weightedBackendModel, api.WeightedBackend]{
		what: "weighted backend", flatten: flattenWeightedBackend,
	}}
}

type weightedBackendResource struct {
	crud[weightedBackendModel, api.WeightedBackend]
}

// weightedBackendModel is the same in the resource and the data sources.
type weightedBackendModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Backends    types.Map    `tfsdk:"backends"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *weightedBackendResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_weighted_backend"
}

func (r *weightedBackendResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A weighted backend splits traffic over other backends in proportion to their weights. A backend it references cannot be deleted while it does.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("weighted backend"),
			"description": descriptionAttribute("backend"),
			"metadata":    metadataAttribute(),
			"backends": schema.MapAttribute{
				MarkdownDescription: "Backend ID → weight, 0 to 10000; at most 32 backends.",
				ElementType:         types.Int64Type,
				Optional:            true,
				Computed:            true,
				Default:             mapdefault.StaticValue(types.MapValueMust(types.Int64Type, map[string]attr.Value{})),
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *weightedBackendResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m weightedBackendModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	// Keys (backend IDs) are always known; a weight may not be.
	checkRule(&resp.Diagnostics, "Invalid weights", !resp.Diagnostics.HasError() && !m.Backends.IsUnknown(), func() error {
		return rules.Weights(mapForRule(m.Backends, 0, func(v attr.Value) int64 { w, _ := v.(types.Int64); return w.ValueInt64() }))
	})
}

func (r *weightedBackendResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *weightedBackendModel) (*api.WeightedBackend, error) {
		return r.client.WeightedBackends.Create(ctx, expandWeightedBackend(m))
	})
}

func (r *weightedBackendResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *weightedBackendModel) (*api.WeightedBackend, error) {
		return r.client.WeightedBackends.Update(ctx, prior.ID.ValueString(), expandWeightedBackend(plan))
	})
}

// knownWeights returns the weights of a map of int64 whose values are known.
func knownWeights(v types.Map) map[string]int64 {
	out := map[string]int64{}
	for k, e := range v.Elements() {
		if w, ok := e.(types.Int64); ok && !w.IsUnknown() && !w.IsNull() {
			out[k] = w.ValueInt64()
		}
	}
	return out
}

func expandWeightedBackend(m *weightedBackendModel) api.WeightedBackendCreate {
	in := api.WeightedBackendCreate{Description: clearable(m.Description), Metadata: clearable(m.Metadata)}
	if !m.Backends.IsNull() && !m.Backends.IsUnknown() {
		in.Backends = knownWeights(m.Backends)
	}
	return in
}

func flattenWeightedBackend(b *api.WeightedBackend, m *weightedBackendModel) {
	m.ID = types.StringValue(b.ID)
	m.Description = emptyAsNull(b.Description, m.Description)
	m.Metadata = emptyAsNull(b.Metadata, m.Metadata)
	weights := make(map[string]attr.Value, len(b.Backends))
	for id, w := range b.Backends {
		weights[id] = types.Int64Value(w)
	}
	m.Backends = types.MapValueMust(types.Int64Type, weights)
	m.CreatedAt = types.StringValue(b.CreatedAt)
}
