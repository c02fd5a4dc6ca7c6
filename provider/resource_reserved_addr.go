package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure   = (*reservedAddrResource)(nil)
	_ resource.ResourceWithImportState = (*reservedAddrResource)(nil)
)

// NewReservedAddrResource is warren_reserved_addr.
func NewReservedAddrResource() resource.Resource {
	return &reservedAddrResource{crud[reservedAddrModel, api.ReservedAddr]{
		what: "reserved address", flatten: flattenReservedAddr,
	}}
}

type reservedAddrResource struct {
	crud[reservedAddrModel, api.ReservedAddr]
}

// reservedAddrModel is the same in the resource and the data sources.
type reservedAddrModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Region      types.String `tfsdk:"region"`
	Addr        types.String `tfsdk:"addr"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *reservedAddrResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_reserved_addr"
}

func (r *reservedAddrResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A reserved TCP address (`host:port`) that TCP edges can listen on. The server assigns the address.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("reserved address"),
			"description": descriptionAttribute("address"),
			"metadata":    metadataAttribute(),
			"region": schema.StringAttribute{
				MarkdownDescription: "Region of the address: `au`, `eu`, `ap`, `us` (default), `jp`, `in` or `sa`. Changing it forces a new address.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(rules.DefaultAddrRegion),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.OneOf(rules.Regions...)},
			},
			"addr": schema.StringAttribute{
				MarkdownDescription: "The address, `host:port`, assigned by the server.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *reservedAddrResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *reservedAddrModel) (*api.ReservedAddr, error) {
		return r.client.ReservedAddrs.Create(ctx, api.ReservedAddrCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), Region: optional(m.Region)})
	})
}

func (r *reservedAddrResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *reservedAddrModel) (*api.ReservedAddr, error) {
		return r.client.ReservedAddrs.Update(ctx, prior.ID.ValueString(), api.ReservedAddrUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

func flattenReservedAddr(a *api.ReservedAddr, m *reservedAddrModel) {
	m.ID = types.StringValue(a.ID)
	m.Description = emptyAsNull(a.Description, m.Description)
	m.Metadata = emptyAsNull(a.Metadata, m.Metadata)
	m.Region = types.StringValue(a.Region)
	m.Addr = types.StringValue(a.Addr)
	m.CreatedAt = types.StringValue(a.CreatedAt)
}
