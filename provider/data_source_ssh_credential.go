package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// sshCredentialDataSources are data.warren_ssh_credential and data.warren_ssh_credentials.
var sshCredentialDataSources = dataSources[api.SSHCredential, sshCredentialModel]{
	name:        "ssh_credential",
	plural:      "ssh_credentials",
	describeOne: "Reads an SSH credential by ID.",
	describeAll: "Lists the account's SSH credentials, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `owner_id` and `acl`.",
	attributes:  sshCredentialDataAttributes,
	flatten:     flattenSSHCredential,
}

func sshCredentialDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the credential is for."),
		"metadata":    computedString("Arbitrary user data."),
		"public_key":  computedString("The public key in authorized_keys form."),
		"acl":         computedStringList("ACL rules; empty means no restrictions."),
		"owner_id":    computedString("ID of the user or service user that owns the credential."),
		"created_at":  computedString("When the credential was created (RFC 3339)."),
	}
}
