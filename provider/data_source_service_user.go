package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

var (
	_ datasource.DataSourceWithConfigure        = (*serviceUserDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*serviceUserDataSource)(nil)
)

// NewServiceUserDataSource is data.warren_service_user, found by id or by name.
func NewServiceUserDataSource() datasource.DataSource { return &serviceUserDataSource{} }

type serviceUserDataSource struct {
	client *client.Client
}

func (d *serviceUserDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_service_user"
}

func (d *serviceUserDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a service user by `id` or by `name` (exactly one of them).",
		Attributes: map[string]schema.Attribute{
			"id":         schema.StringAttribute{MarkdownDescription: "ID of the service user.", Optional: true, Computed: true},
			"name":       schema.StringAttribute{MarkdownDescription: "Name of the service user.", Optional: true, Computed: true},
			"active":     schema.BoolAttribute{MarkdownDescription: "Whether the service user's keys may be used.", Computed: true},
			"created_at": computedString("When the service user was created (RFC 3339)."),
		},
	}
}

func (d *serviceUserDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name"))}
}

func (d *serviceUserDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *serviceUserDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m serviceUserModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var user *api.ServiceUser
	if !m.ID.IsNull() {
		u, err := d.client.ServiceUsers.Get(ctx, m.ID.ValueString())
		if err != nil {
			addAPIError(&resp.Diagnostics, "read service user "+m.ID.ValueString(), err)
			return
		}
		user = u
	} else {
		// Names are unique in an account, but the API filters only on id and created_at.
		all, err := d.client.ServiceUsers.List(ctx, client.ListOptions{})
		if err != nil {
			addAPIError(&resp.Diagnostics, "list service users", err)
			return
		}
		for i := range all {
			if all[i].Name == m.Name.ValueString() {
				user = &all[i]
			}
		}
		if user == nil {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Service user not found", fmt.Sprintf("No service user is named %q.", m.Name.ValueString()))
			return
		}
	}
	flattenServiceUser(user, &m)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// NewServiceUsersDataSource is data.warren_service_users.
func NewServiceUsersDataSource() datasource.DataSource {
	return &listDataSource[api.ServiceUser, serviceUserModel]{
		typeName:    "_service_users",
		member:      "service_users",
		description: "Lists the account's service users, optionally narrowed by a CEL filter on `id` and `created_at`.",
		attributes: map[string]schema.Attribute{
			"id":         computedString("ID of the service user."),
			"name":       computedString("Name of the service user."),
			"active":     schema.BoolAttribute{MarkdownDescription: "Whether the service user's keys may be used.", Computed: true},
			"created_at": computedString("When the service user was created (RFC 3339)."),
		},
		list:    func(c *client.Client) listFunc[api.ServiceUser] { return c.ServiceUsers.List },
		flatten: flattenServiceUser,
	}
}
