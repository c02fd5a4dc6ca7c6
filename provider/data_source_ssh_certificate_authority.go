package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// sshCertificateAuthorityDataSources are data.warren_ssh_certificate_authority and data.warren_ssh_certificate_authorities.
var sshCertificateAuthorityDataSources = dataSources[api.SSHCertificateAuthority, sshCAModel]{
	name:        "ssh_certificate_authority",
	plural:      "ssh_certificate_authorities",
	describeOne: "Reads an SSH certificate authority by ID, e.g. to trust its public key.",
	describeAll: "Lists the account's SSH certificate authorities, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
	attributes:  sshCADataAttributes,
	flatten:     flattenSSHCA,
}

func sshCADataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":      computedString("What the certificate authority is for."),
		"metadata":         computedString("Arbitrary user data."),
		"private_key_type": computedString("Type of the key pair: `rsa`, `ecdsa` or `ed25519`."),
		"key_size":         schema.Int64Attribute{MarkdownDescription: "RSA key size; null for other key types.", Computed: true},
		"elliptic_curve":   computedString("ECDSA curve; null for other key types."),
		"public_key":       computedString("The public key in authorized_keys form."),
		"key_type":         computedString("Type of the key pair, as the API reports it."),
		"created_at":       computedString("When the certificate authority was created (RFC 3339)."),
	}
}
