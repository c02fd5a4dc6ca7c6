package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// certificateAuthorities is /certificate_authorities (details.md §6.7): one uploaded CA
// certificate, referenced by mutual_tls modules. ca_pem is immutable: PATCH takes
// description and metadata.
var certificateAuthorities = &family[api.CertificateAuthority, *api.CertificateAuthority, api.CertificateAuthorityCreate, api.CertificateAuthorityUpdate]{
	kind: kinds.CertificateAuthority,
	def:  api.CertificateAuthorities,
	filter: withFields(textFields, filter.Fields{
		"subject_common_name": filter.String,
		"not_before":          filter.Timestamp,
		"not_after":           filter.Timestamp,
	}),
	create: func(c *call, tx store.Tx, in *api.CertificateAuthorityCreate, ca *api.CertificateAuthority) (any, error) {
		if err := setText(rules.CertificateAuthorityText, in.Description, in.Metadata, &ca.Description, &ca.Metadata); err != nil {
			return nil, err
		}
		cert, err := rules.CertificateAuthority(deref(in.CAPEM))
		if err != nil {
			return nil, err
		}
		ca.CAPEM = *in.CAPEM
		ca.SubjectCommonName = cert.Subject.CommonName
		ca.NotBefore = api.FormatTime(cert.NotBefore)
		ca.NotAfter = api.FormatTime(cert.NotAfter)
		ca.KeyUsages = keyUsages(cert)
		ca.ExtendedKeyUsages = extKeyUsages(cert)
		return nil, nil
	},
	update: func(c *call, tx store.Tx, in *api.CertificateAuthorityUpdate, ca *api.CertificateAuthority) error {
		return setText(rules.CertificateAuthorityText, in.Description, in.Metadata, &ca.Description, &ca.Metadata)
	},
}
