package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// tlsCertificateDataSources are data.warren_tls_certificate and data.warren_tls_certificates.
var tlsCertificateDataSources = dataSources[api.TLSCertificate, tlsCertificateModel]{
	name:        "tls_certificate",
	plural:      "tls_certificates",
	describeOne: "Reads a TLS certificate by ID. Its private key is never returned.",
	describeAll: "Lists the account's TLS certificates, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `subject_common_name`, `not_before`, `not_after` and `serial_number`.",
	attributes:  tlsCertificateDataAttributes,
	flatten:     flattenTLSCertificate,
}

// certificateAuthorityDataSources are data.warren_certificate_authority and data.warren_certificate_authorities.
var certificateAuthorityDataSources = dataSources[api.CertificateAuthority, certificateAuthorityModel]{
	name:        "certificate_authority",
	plural:      "certificate_authorities",
	describeOne: "Reads a certificate authority by ID.",
	describeAll: "Lists the account's certificate authorities, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `subject_common_name`, `not_before` and `not_after`.",
	attributes:  certificateAuthorityDataAttributes,
	flatten:     flattenCertificateAuthority,
}

func tlsCertificateDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":         computedString("What the certificate is for."),
		"metadata":            computedString("Arbitrary user data."),
		"certificate_pem":     computedString("The certificate chain in PEM, leaf first."),
		"subject_common_name": computedString("Common name of the leaf's subject."),
		"subject_alternative_names": schema.SingleNestedAttribute{
			MarkdownDescription: "The leaf's subject alternative names.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"dns_names": computedStringList("DNS names."),
				"ips":       computedStringList("IP addresses."),
			},
		},
		"issued_at":                   computedString("When the service issued the certificate; null for uploaded certificates."),
		"not_before":                  computedString("Start of the leaf's validity (RFC 3339)."),
		"not_after":                   computedString("End of the leaf's validity (RFC 3339)."),
		"key_usages":                  computedStringList("The leaf's key usages."),
		"extended_key_usages":         computedStringList("The leaf's extended key usages."),
		"private_key_type":            computedString("Type of the private key."),
		"issuer_common_name":          computedString("Common name of the leaf's issuer."),
		"serial_number":               computedString("Serial number of the leaf, lowercase hex."),
		"subject_organization":        computedString("Organization of the leaf's subject."),
		"subject_organizational_unit": computedString("Organizational unit of the leaf's subject."),
		"subject_locality":            computedString("Locality of the leaf's subject."),
		"subject_province":            computedString("Province of the leaf's subject."),
		"subject_country":             computedString("Country of the leaf's subject."),
		"created_at":                  computedString("When the certificate was uploaded (RFC 3339)."),
	}
}

func certificateAuthorityDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":         computedString("What the certificate authority is for."),
		"metadata":            computedString("Arbitrary user data."),
		"ca_pem":              computedString("The CA certificate in PEM."),
		"subject_common_name": computedString("Common name of the certificate's subject."),
		"not_before":          computedString("Start of the certificate's validity (RFC 3339)."),
		"not_after":           computedString("End of the certificate's validity (RFC 3339)."),
		"key_usages":          computedStringList("The certificate's key usages."),
		"extended_key_usages": computedStringList("The certificate's extended key usages."),
		"created_at":          computedString("When the certificate authority was uploaded (RFC 3339)."),
	}
}
