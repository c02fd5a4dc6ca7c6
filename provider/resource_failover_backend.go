package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure   = (*failoverBackendResource)(nil)
	_ resource.ResourceWithImportState = (*failoverBackendResource)(nil)
)

// NewFailoverBackendResource is warren_failover_backend.
func NewFailoverBackendResource() resource.Resource {
	return &failoverBackendResource{crud[failoverBackendModel, api.FailoverBackend]{
		what: "failover backend", flatten: flattenFailoverBackend,
	}}
}

type failoverBackendResource struct {
	crud[failoverBackendModel, api.FailoverBackend]
}

// failoverBackendModel is the same in the resource and the data sources.
type failoverBackendModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Backends    types.List   `tfsdk:"backends"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *failoverBackendResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_failover_backend"
}

func (r *failoverBackendResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A failover backend sends traffic to the first of its backends that is up. A backend it references cannot be deleted while it does.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("failover backend"),
			"description": descriptionAttribute("backend"),
			"metadata":    metadataAttribute(),
			"backends": schema.ListAttribute{
				MarkdownDescription: "Backend IDs in order of preference; at most 32, each once.",
				ElementType:         types.StringType,
				Optional:            true,
				Computed:            true,
				Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{})),
				Validators:          []validator.List{listvalidator.SizeAtMost(rules.MaxBackendChildren), listvalidator.UniqueValues()},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *failoverBackendResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *failoverBackendModel) (*api.FailoverBackend, error) {
		return r.client.FailoverBackends.Create(ctx, api.FailoverBackendCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), Backends: stringsOf(m.Backends)})
	})
}

func (r *failoverBackendResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *failoverBackendModel) (*api.FailoverBackend, error) {
		return r.client.FailoverBackends.Update(ctx, prior.ID.ValueString(), api.FailoverBackendCreate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata), Backends: stringsOf(plan.Backends)})
	})
}

func flattenFailoverBackend(b *api.FailoverBackend, m *failoverBackendModel) {
	m.ID = types.StringValue(b.ID)
	m.Description = emptyAsNull(b.Description, m.Description)
	m.Metadata = emptyAsNull(b.Metadata, m.Metadata)
	m.Backends = stringList(b.Backends)
	m.CreatedAt = types.StringValue(b.CreatedAt)
}
