package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*serviceUserResource)(nil)
	_ resource.ResourceWithImportState = (*serviceUserResource)(nil)
)

// NewServiceUserResource is warren_service_user.
func NewServiceUserResource() resource.Resource {
	return &serviceUserResource{crud[serviceUserModel, api.ServiceUser]{
		what: "service user", flatten: flattenServiceUser,
	}}
}

type serviceUserResource struct {
	crud[serviceUserModel, api.ServiceUser]
}

// serviceUserModel is the same in the resource and the data sources.
type serviceUserModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Active    types.Bool   `tfsdk:"active"`
	CreatedAt types.String `tfsdk:"created_at"`
}

func (r *serviceUserResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_service_user"
}

func (r *serviceUserResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A service user is a non-human principal (formerly a bot user) that can own API keys and credentials. Only admins may manage service users; deleting one also deletes the keys and credentials it owns.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("service user"),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the service user, unique in the account.",
				Required:            true,
				Validators:          []validator.String{validators.String(fmt.Sprintf("must be a non-empty name of at most %d bytes", rules.MaxNameBytes), rules.ServiceUserName)},
			},
			"active": schema.BoolAttribute{
				MarkdownDescription: "Whether the service user's keys may be used. Defaults to `true`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *serviceUserResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *serviceUserModel) (*api.ServiceUser, error) {
		return r.client.ServiceUsers.Create(ctx, api.ServiceUserCreate{Name: optional(m.Name), Active: m.Active.ValueBoolPointer()})
	})
}

func (r *serviceUserResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *serviceUserModel) (*api.ServiceUser, error) {
		return r.client.ServiceUsers.Update(ctx, prior.ID.ValueString(), api.ServiceUserUpdate{Name: optional(plan.Name), Active: plan.Active.ValueBoolPointer()})
	})
}

func flattenServiceUser(u *api.ServiceUser, m *serviceUserModel) {
	m.ID = types.StringValue(u.ID)
	m.Name = types.StringValue(u.Name)
	m.Active = types.BoolValue(u.Active)
	m.CreatedAt = types.StringValue(u.CreatedAt)
}
