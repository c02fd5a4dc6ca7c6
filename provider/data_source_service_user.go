package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// NewServiceUserDataSource is data.warren_service_user, found by id or by name.
func NewServiceUserDataSource() datasource.DataSource {
	return &objectDataSource[api.ServiceUser, serviceUserModel]{
		typeName:    "_service_user",
		description: "Reads a service user by `id` or by `name` (exactly one of them).",
		attributes:  serviceUserDataAttributes(),
		get:         func(c *client.Client) getFunc[api.ServiceUser] { return c.ServiceUsers.Get },
		flatten:     flattenServiceUser,
		keyName:     "name",
		// Names are unique in an account, but the API filters only on id and created_at.
		find: func(ctx context.Context, c *client.Client, name string) (*api.ServiceUser, error) {
			all, err := c.ServiceUsers.List(ctx, client.ListOptions{})
			for i := range all {
				if all[i].Name == name {
					return &all[i], nil
				}
			}
			return nil, err
		},
	}
}

// NewServiceUsersDataSource is data.warren_service_users.
func NewServiceUsersDataSource() datasource.DataSource {
	return &listDataSource[api.ServiceUser, serviceUserModel]{
		typeName:    "_service_users",
		member:      "service_users",
		description: "Lists the account's service users, optionally narrowed by a CEL filter on `id` and `created_at`.",
		attributes:  withID(serviceUserDataAttributes()),
		list:        func(c *client.Client) listFunc[api.ServiceUser] { return c.ServiceUsers.List },
		flatten:     flattenServiceUser,
	}
}

func serviceUserDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name":       computedString("Name of the service user."),
		"active":     schema.BoolAttribute{MarkdownDescription: "Whether the service user's keys may be used.", Computed: true},
		"created_at": computedString("When the service user was created (RFC 3339)."),
	}
}
