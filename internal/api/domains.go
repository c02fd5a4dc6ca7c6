package api

// ReservedDomain is a hostname reserved by an account (/reserved_domains, details.md §6.5).
// Nullable members are pointers and are always sent, as JSON null when unset.
type ReservedDomain struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	Domain      string `json:"domain"`
	// Region is deprecated: accepted on create and always returned as "".
	Region string `json:"region"`
	// CNAMETarget is null for subdomains of the service's own base domain.
	CNAMETarget                 *string                      `json:"cname_target"`
	Certificate                 *Ref                         `json:"certificate"`
	CertificateManagementPolicy *CertificateManagementPolicy `json:"certificate_management_policy"`
	CertificateManagementStatus *CertificateManagementStatus `json:"certificate_management_status"`
	// ACMEChallengeCNAMETarget is set only on wildcard domains the caller brings.
	ACMEChallengeCNAMETarget *string `json:"acme_challenge_cname_target"`
	// ResolvesTo is null until set; [] pins nothing (global resolution).
	ResolvesTo []ResolvesTo `json:"resolves_to"`
}

// CertificateManagementPolicy asks the service to obtain and renew the domain's certificate.
// In a request an empty member takes its default (letsencrypt, ecdsa).
type CertificateManagementPolicy struct {
	Authority      string `json:"authority"`
	PrivateKeyType string `json:"private_key_type"`
}

// CertificateManagementStatus reports on a managed certificate.
type CertificateManagementStatus struct {
	RenewsAt        *string          `json:"renews_at"`
	ProvisioningJob *ProvisioningJob `json:"provisioning_job"`
}

// ProvisioningJob is the state of the managed certificate's issuance.
type ProvisioningJob struct {
	ErrorCode *string `json:"error_code"` // DNS_ERROR, INTERNAL_ERROR or null
	Msg       string  `json:"msg"`
	StartedAt string  `json:"started_at"`
	RetriesAt *string `json:"retries_at"`
}

// ResolvesTo is one region or IP resolution target of a domain.
type ResolvesTo struct {
	Value string `json:"value"`
}

// ReservedDomainCreate is the body of POST /reserved_domains. A certificate_id of "" means
// that no certificate is given.
type ReservedDomainCreate struct {
	Domain                      *string                      `json:"domain,omitempty" required:"true"`
	Region                      *string                      `json:"region,omitempty"`
	Description                 *string                      `json:"description,omitempty"`
	Metadata                    *string                      `json:"metadata,omitempty"`
	CertificateID               *string                      `json:"certificate_id,omitempty"`
	CertificateManagementPolicy *CertificateManagementPolicy `json:"certificate_management_policy,omitempty"`
	ResolvesTo                  []ResolvesTo                 `json:"resolves_to,omitempty"`
}

// ReservedDomainUpdate is the body of PATCH /reserved_domains/{id}. domain and region cannot
// change. A certificate_id of "" means that no certificate is given (clients send exactly
// that beside a policy); a nil ResolvesTo keeps the stored targets, an empty one clears them.
type ReservedDomainUpdate struct {
	ID                          *string                      `json:"id,omitempty"`
	Description                 *string                      `json:"description,omitempty"`
	Metadata                    *string                      `json:"metadata,omitempty"`
	CertificateID               *string                      `json:"certificate_id,omitempty"`
	CertificateManagementPolicy *CertificateManagementPolicy `json:"certificate_management_policy,omitempty"`
	ResolvesTo                  []ResolvesTo                 `json:"resolves_to"`
}

// ReservedAddr is a TCP address (host:port) reserved by an account (/reserved_addrs,
// details.md §6.16). The server assigns addr.
type ReservedAddr struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	Addr        string `json:"addr"`
	Region      string `json:"region" enum:"region"`
}

// ReservedAddrCreate is the body of POST /reserved_addrs.
type ReservedAddrCreate struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	Region      *string `json:"region,omitempty"` // "" takes the default
}

// ReservedAddrUpdate is the body of PATCH /reserved_addrs/{id}.
type ReservedAddrUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}
