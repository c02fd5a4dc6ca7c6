package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// apiKeyDataSources are data.warren_api_key and data.warren_api_keys.
var apiKeyDataSources = dataSources[api.APIKey, apiKeyModel]{
	name:        "api_key",
	plural:      "api_keys",
	describeOne: "Reads an API key by ID. Its token is never returned.",
	describeAll: "Lists the account's API keys, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata` and `owner_id`.",
	attributes:  apiKeyDataAttributes,
	flatten:     flattenAPIKey,
}

func apiKeyDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the API key is for."),
		"metadata":    computedString("Arbitrary user data."),
		"owner_id":    computedString("ID of the user or service user that owns the key."),
		"created_at":  computedString("When the key was created (RFC 3339)."),
	}
}
