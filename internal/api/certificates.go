package api

// TLSCertificate is an uploaded certificate chain and its private key (/tls_certificates,
// details.md §6.6, §7.7). Every member after certificate_pem is derived from the leaf (the
// first certificate) and its key; the private key itself is never returned.
type TLSCertificate struct {
	Meta
	Description               string                  `json:"description,omitempty"`
	Metadata                  string                  `json:"metadata,omitempty"`
	CertificatePEM            string                  `json:"certificate_pem"`
	SubjectCommonName         string                  `json:"subject_common_name"`
	SubjectAlternativeNames   SubjectAlternativeNames `json:"subject_alternative_names"`
	IssuedAt                  *string                 `json:"issued_at"` // null for uploads
	NotBefore                 string                  `json:"not_before"`
	NotAfter                  string                  `json:"not_after"`
	KeyUsages                 []string                `json:"key_usages"`
	ExtendedKeyUsages         []string                `json:"extended_key_usages"`
	PrivateKeyType            string                  `json:"private_key_type"` // rsa, ecdsa or ed25519
	IssuerCommonName          string                  `json:"issuer_common_name"`
	SerialNumber              string                  `json:"serial_number"` // lowercase hex, no separators
	SubjectOrganization       string                  `json:"subject_organization"`
	SubjectOrganizationalUnit string                  `json:"subject_organizational_unit"`
	SubjectLocality           string                  `json:"subject_locality"`
	SubjectProvince           string                  `json:"subject_province"`
	SubjectCountry            string                  `json:"subject_country"`
}

// SubjectAlternativeNames are the DNS and IP names of a certificate; both are [] when empty.
type SubjectAlternativeNames struct {
	DNSNames []string `json:"dns_names"`
	IPs      []string `json:"ips"`
}

// TLSCertificateCreate is the body of POST /tls_certificates.
type TLSCertificateCreate struct {
	Description    *string `json:"description,omitempty"`
	Metadata       *string `json:"metadata,omitempty"`
	CertificatePEM *string `json:"certificate_pem,omitempty" required:"true"`
	PrivateKeyPEM  *string `json:"private_key_pem,omitempty" required:"true"`
}

// TLSCertificateUpdate is the body of PATCH /tls_certificates/{id}; the PEMs are immutable.
type TLSCertificateUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}

// CertificateAuthority is an uploaded CA certificate (/certificate_authorities, details.md
// §6.7), used by mutual_tls modules to verify client certificates.
type CertificateAuthority struct {
	Meta
	Description       string   `json:"description,omitempty"`
	Metadata          string   `json:"metadata,omitempty"`
	CAPEM             string   `json:"ca_pem"`
	SubjectCommonName string   `json:"subject_common_name"`
	NotBefore         string   `json:"not_before"`
	NotAfter          string   `json:"not_after"`
	KeyUsages         []string `json:"key_usages"`
	ExtendedKeyUsages []string `json:"extended_key_usages"`
}

// CertificateAuthorityCreate is the body of POST /certificate_authorities.
type CertificateAuthorityCreate struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	CAPEM       *string `json:"ca_pem,omitempty" required:"true"`
}

// CertificateAuthorityUpdate is the body of PATCH /certificate_authorities/{id}; ca_pem is
// immutable.
type CertificateAuthorityUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}
