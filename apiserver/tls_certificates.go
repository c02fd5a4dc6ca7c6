package apiserver

import (
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// tlsCertificates is /tls_certificates (details.md §6.6, §7.7): an uploaded chain and key.
// The members after certificate_pem are derived from the leaf; the key is kept in the secret
// column and never returned. The PEMs are immutable: PATCH takes description and metadata.
var tlsCertificates = &family[api.TLSCertificate, *api.TLSCertificate, api.TLSCertificateCreate, api.TLSCertificateUpdate]{
	kind: kinds.TLSCertificate,
	def:  api.TLSCertificates,
	filter: withFields(textFields, filter.Fields{
		"subject_common_name": filter.String,
		"not_before":          filter.Timestamp,
		"not_after":           filter.Timestamp,
		"serial_number":       filter.String,
	}),
	create: func(c *call, tx store.Tx, in *api.TLSCertificateCreate, cert *api.TLSCertificate) (any, error) {
		if err := setText(rules.TLSCertificateText, in.Description, in.Metadata, &cert.Description, &cert.Metadata); err != nil {
			return nil, err
		}
		upload, err := rules.TLSCertificate(deref(in.CertificatePEM), deref(in.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		leaf := upload.Chain[0]
		ips := []string{}
		for _, ip := range leaf.IPAddresses {
			ips = append(ips, ip.String())
		}
		dnsNames := leaf.DNSNames
		if dnsNames == nil {
			dnsNames = []string{}
		}
		subject := leaf.Subject
		cert.CertificatePEM = *in.CertificatePEM
		cert.SubjectCommonName = subject.CommonName
		cert.SubjectAlternativeNames = api.SubjectAlternativeNames{DNSNames: dnsNames, IPs: ips}
		cert.NotBefore = api.FormatTime(leaf.NotBefore)
		cert.NotAfter = api.FormatTime(leaf.NotAfter)
		cert.KeyUsages = keyUsages(leaf)
		cert.ExtendedKeyUsages = extKeyUsages(leaf)
		cert.PrivateKeyType = privateKeyType(upload.Key)
		cert.IssuerCommonName = leaf.Issuer.CommonName
		cert.SerialNumber = serialNumber(leaf)
		cert.SubjectOrganization = nameValue(subject.Organization)
		cert.SubjectOrganizationalUnit = nameValue(subject.OrganizationalUnit)
		cert.SubjectLocality = nameValue(subject.Locality)
		cert.SubjectProvince = nameValue(subject.Province)
		cert.SubjectCountry = nameValue(subject.Country)
		return kinds.TLSCertificateSecret{PrivateKeyPEM: *in.PrivateKeyPEM}, nil
	},
	update: func(c *call, tx store.Tx, in *api.TLSCertificateUpdate, cert *api.TLSCertificate) error {
		return setText(rules.TLSCertificateText, in.Description, in.Metadata, &cert.Description, &cert.Metadata)
	},
	// Reserved domains declare their certificate as a ref, so the store refuses to delete a
	// certificate a domain uses; this names the domains. The catalogue's closest code is
	// ERR_1966 (a certificate owned by a managed policy, i.e. by its domain).
	inUse: func(c *call, cert *api.TLSCertificate, referrers []*store.Object) error {
		var domains []string
		for _, r := range referrers {
			domains = append(domains, r.ID)
		}
		e := apierr.BadRequest("ERR_1966", "The TLS certificate %s is in use by reserved domain %s and cannot be deleted; detach it first (DELETE /reserved_domains/{id}/certificate).", cert.ID, strings.Join(domains, ", "))
		return apierr.WithDetail(e, "referrers", strings.Join(domains, ","))
	},
}
