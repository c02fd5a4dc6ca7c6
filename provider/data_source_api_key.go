package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// NewAPIKeyDataSource is data.warren_api_key.
func NewAPIKeyDataSource() datasource.DataSource {
	return &objectDataSource[api.APIKey, apiKeyModel]{
		typeName:    "_api_key",
		description: "Reads an API key by ID. Its token is never returned.",
		attributes:  apiKeyDataAttributes(),
		get:         func(c *client.Client) getFunc[api.APIKey] { return c.APIKeys.Get },
		flatten:     flattenAPIKey,
	}
}

// NewAPIKeysDataSource is data.warren_api_keys.
func NewAPIKeysDataSource() datasource.DataSource {
	return &listDataSource[api.APIKey, apiKeyModel]{
		typeName:    "_api_keys",
		member:      "api_keys",
		description: "Lists the account's API keys, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata` and `owner_id`.",
		attributes:  withID(apiKeyDataAttributes()),
		list:        func(c *client.Client) listFunc[api.APIKey] { return c.APIKeys.List },
		flatten:     flattenAPIKey,
	}
}

func apiKeyDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the API key is for."),
		"metadata":    computedString("Arbitrary user data."),
		"owner_id":    computedString("ID of the user or service user that owns the key."),
		"created_at":  computedString("When the key was created (RFC 3339)."),
	}
}
