package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// serviceUserDataSources are data.warren_service_user and data.warren_service_users.
var serviceUserDataSources = dataSources[api.ServiceUser, serviceUserModel]{
	name:        "service_user",
	plural:      "service_users",
	describeOne: "Reads a service user by `id` or by `name` (exactly one of them).",
	describeAll: "Lists the account's service users, optionally narrowed by a CEL filter on `id` and `created_at`.",
	attributes:  serviceUserDataAttributes,
	flatten:     flattenServiceUser,
	keyName:     "name",
	// Names are unique in an account, but the API filters service users only on id and created_at.
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

func serviceUserDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name":       computedString("Name of the service user."),
		"active":     schema.BoolAttribute{MarkdownDescription: "Whether the service user's keys may be used.", Computed: true},
		"created_at": computedString("When the service user was created (RFC 3339)."),
	}
}
