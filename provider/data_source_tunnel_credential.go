package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// tunnelCredentialDataSources are data.warren_tunnel_credential and data.warren_tunnel_credentials.
var tunnelCredentialDataSources = dataSources[api.Credential, tunnelCredentialModel]{
	name:        "tunnel_credential",
	plural:      "tunnel_credentials",
	describeOne: "Reads a tunnel credential by ID. Its token is never returned.",
	describeAll: "Lists the account's tunnel credentials, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `owner_id` and `acl`.",
	attributes:  tunnelCredentialDataAttributes,
	flatten:     flattenTunnelCredential,
}

func tunnelCredentialDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the credential is for."),
		"metadata":    computedString("Arbitrary user data."),
		"acl":         computedStringList("ACL rules; empty means no restrictions."),
		"owner_id":    computedString("ID of the user or service user that owns the credential."),
		"created_at":  computedString("When the credential was created (RFC 3339)."),
	}
}
