package apiserver

import (
	"cmp"
	"crypto/rand"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// reservedDomains is /reserved_domains (details.md §6.5). A domain either lies under the
// service's own base domain (service-owned: the service runs its DNS and certificates) or is
// brought by the caller, who points it at its cname_target and gets a managed certificate
// unless it uploads one. The domain holds its uploaded certificate as a ref, so the
// certificate cannot be deleted while attached.
var reservedDomains = &family[api.ReservedDomain, *api.ReservedDomain, api.ReservedDomainCreate, api.ReservedDomainUpdate]{
	kind: kinds.ReservedDomain,
	def:  api.ReservedDomains,
	filter: withFields(textFields, filter.Fields{
		"domain":                      filter.String,
		"region":                      filter.String,
		"cname_target":                filter.String,
		"certificate.id":              filter.String,
		"acme_challenge_cname_target": filter.String,
	}),
	emptyUpdateCode: "ERR_422",
	create: func(c *call, tx store.Tx, in *api.ReservedDomainCreate, d *api.ReservedDomain) (any, error) {
		if err := setText(rules.ReservedDomainText, in.Description, in.Metadata, &d.Description, &d.Metadata); err != nil {
			return nil, err
		}
		d.Domain = rules.NormalizeDomain(deref(in.Domain))
		if err := c.s.checkDomain(d.Domain); err != nil {
			return nil, err
		}
		// region is deprecated: checked, then dropped ("us" comes back as "").
		if region := deref(in.Region); region != "" {
			if err := rules.DomainRegion(region); err != nil {
				return nil, err
			}
		}
		if err := setResolvesTo(d, in.ResolvesTo); err != nil {
			return nil, err
		}
		owned := c.s.serviceOwned(d.Domain)
		if !owned {
			d.CNAMETarget = ptr(randomLabel(16) + "." + randomLabel(16) + "." + c.s.cnameDomain())
			if strings.HasPrefix(d.Domain, "*.") {
				d.ACMEChallengeCNAMETarget = ptr(randomLabel(8) + "." + c.s.ACMEChallengeZone())
			}
		}
		if err := setCertificate(c, tx, d, in.CertificateID, in.CertificateManagementPolicy); err != nil {
			return nil, err
		}
		if !owned && d.Certificate == nil && d.CertificateManagementPolicy == nil {
			return nil, setCertificate(c, tx, d, nil, &api.CertificateManagementPolicy{})
		}
		return nil, nil
	},
	update: func(c *call, tx store.Tx, in *api.ReservedDomainUpdate, d *api.ReservedDomain) error {
		if err := setText(rules.ReservedDomainText, in.Description, in.Metadata, &d.Description, &d.Metadata); err != nil {
			return err
		}
		if err := setCertificate(c, tx, d, in.CertificateID, in.CertificateManagementPolicy); err != nil {
			return err
		}
		return setResolvesTo(d, in.ResolvesTo)
	},
	refs: func(d *api.ReservedDomain) []string {
		if d.Certificate == nil {
			return nil
		}
		return []string{d.Certificate.ID}
	},
	// A name is reserved once across the server (ERR_413 / ERR_414).
	unique: func(_ string, d *api.ReservedDomain) []string { return []string{kinds.ReservedDomainKey(d.Domain)} },
	duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
		holder, err := tx.Lookup(c.r.Context(), dup.Key)
		if err == nil && holder.AccountID == c.who.accountID {
			return apierr.WithDetail(apierr.BadRequest("ERR_413", "The domain is already reserved on this account as %s.", holder.ID), "param", "domain")
		}
		return apierr.WithDetail(apierr.BadRequest("ERR_414", "The domain is reserved by another account."), "param", "domain")
	},
	// Edges will hold their domains as refs (details.md §12 hostports).
	inUse: func(c *call, d *api.ReservedDomain, referrers []*store.Object) error {
		return stillReferenced("ERR_446", "The domain "+d.Domain, referrers)
	},
	render: func(c *call, d *api.ReservedDomain) {
		if d.Certificate != nil {
			ref := c.ref(d.Certificate.ID)
			d.Certificate = &ref
		}
	},
	routes: reservedDomainRoutes,
}

// reservedDomainRoutes registers the two detach endpoints (details.md §6.5), 204 on success.
func reservedDomainRoutes(f *family[api.ReservedDomain, *api.ReservedDomain, api.ReservedDomainCreate, api.ReservedDomainUpdate], s *Server, mux *router) {
	detach := func(member string, change func(d *api.ReservedDomain) error) {
		mux.api("DELETE "+f.def.Path+"/{id}/"+member, op{status: noContent}, func(c *call) error {
			if _, err := f.modify(c, func(w *write[*api.ReservedDomain]) error { return change(w.obj) }); err != nil {
				return err
			}
			return c.noContent()
		})
	}
	detach("certificate", func(d *api.ReservedDomain) error {
		if d.CertificateManagementPolicy != nil {
			return apierr.BadRequest("ERR_436", "The certificate of %s is managed by its certificate_management_policy; delete the policy instead.", d.Domain)
		}
		d.Certificate = nil
		return nil
	})
	detach("certificate_management_policy", func(d *api.ReservedDomain) error {
		d.CertificateManagementPolicy, d.CertificateManagementStatus = nil, nil
		return nil
	})
}

// checkDomain checks a normalised name for reservation: the DNS rules, the service's own
// apex, and the names the service uses for itself (CNAME and ACME targets, the TCP host).
func (s *Server) checkDomain(name string) error {
	if err := rules.ReservedDomain(name, s.opts.DomainBase); err != nil {
		return err
	}
	for _, own := range []string{s.cnameDomain(), s.ACMEChallengeZone(), s.opts.AddrPool.Host} {
		if name == own || strings.HasSuffix(name, "."+own) {
			return apierr.WithDetail(apierr.BadRequest("ERR_450", "The service uses %s for itself: neither it nor its subdomains can be reserved.", own), "param", "domain")
		}
	}
	return nil
}

// cnameDomain and ACMEChallengeZone hold the CNAME targets and the ACME challenge targets of
// the domains callers bring (the placeholders <cname-domain> and <dns-domain> of details.md
// §6.5); Warren's DNS server answers for the latter (apiserver/acmedns).
func (s *Server) cnameDomain() string       { return "cname." + s.opts.DomainBase }
func (s *Server) ACMEChallengeZone() string { return "acme-challenge." + s.opts.DomainBase }

// serviceOwned reports whether name lies under the service's base domain.
func (s *Server) serviceOwned(name string) bool {
	return rules.ServiceSubdomain(name, s.opts.DomainBase)
}

// setCertificate applies a request's certificate_id and certificate_management_policy to d:
// a policy replaces an uploaded certificate, a certificate replaces the policy. An empty
// certificate_id is not a certificate (clients send "" beside a policy).
func setCertificate(c *call, tx store.Tx, d *api.ReservedDomain, certificateID *string, policy *api.CertificateManagementPolicy) error {
	if err := rules.CertificateChoice(certificateID, policy != nil); err != nil {
		return err
	}
	owned := c.s.serviceOwned(d.Domain)
	switch {
	case policy != nil:
		if owned {
			return apierr.WithDetail(apierr.BadRequest("ERR_439", "The service manages the certificates of its own domains: certificate_management_policy must be null for %s.", d.Domain), "param", "certificate_management_policy")
		}
		if err := rules.CertificateManagementPolicy(policy.Authority, policy.PrivateKeyType); err != nil {
			return err
		}
		p := api.CertificateManagementPolicy{
			Authority:      cmp.Or(policy.Authority, rules.DefaultCertificateAuthority),
			PrivateKeyType: cmp.Or(policy.PrivateKeyType, rules.DefaultCertificateKeyType),
		}
		// The same policy again keeps its provisioning job; a new one starts over.
		if d.CertificateManagementPolicy == nil || *d.CertificateManagementPolicy != p || d.CertificateManagementStatus == nil {
			d.CertificateManagementStatus = &api.CertificateManagementStatus{ProvisioningJob: &api.ProvisioningJob{
				Msg:       "Managed certificate provisioning in progress.",
				StartedAt: api.FormatTime(c.s.opts.Now()),
			}}
		}
		d.CertificateManagementPolicy, d.Certificate = &p, nil
	case certificateID != nil && *certificateID != "":
		if owned {
			return apierr.WithDetail(apierr.BadRequest("ERR_440", "Uploaded certificates cannot be used on the service's own domain %s.", d.Domain), "param", "certificate_id")
		}
		cert, err := c.lookup(tx, *certificateID, ids.TLSCertificate)
		if isNotFound(err) {
			return apierr.WithDetail(apierr.BadRequest("ERR_1965", "The TLS certificate %s does not exist.", rules.Quote(*certificateID)), "param", "certificate_id")
		}
		if err != nil {
			return err
		}
		d.Certificate = &api.Ref{ID: cert.ID}
		d.CertificateManagementPolicy, d.CertificateManagementStatus = nil, nil
	}
	return nil
}

// setResolvesTo checks and stores resolves_to; an empty list is stored as [].
func setResolvesTo(d *api.ReservedDomain, targets []api.ResolvesTo) error {
	if targets == nil {
		return nil
	}
	values := make([]string, len(targets))
	for i, t := range targets {
		values[i] = t.Value
	}
	if err := rules.ResolvesTo(values); err != nil {
		return err
	}
	d.ResolvesTo = targets
	return nil
}

// randomLabel returns n random lowercase base32 characters (5 bits each), for DNS labels.
func randomLabel(n int) string { return strings.ToLower(rand.Text()[:n]) }

func ptr[T any](v T) *T { return &v }
