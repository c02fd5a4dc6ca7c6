package acme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3/acme"
	"github.com/miekg/dns"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// The error codes of a provisioning job (details.md §10.2): DNS_ERROR when the domain's DNS
// is not what the API told its owner to set (the owner must fix it), INTERNAL_ERROR when the
// fault is Warren's or passing.
const (
	codeDNS      = "DNS_ERROR"
	codeInternal = "INTERNAL_ERROR"
)

// dnsTimeout bounds one query of a CNAME check.
const dnsTimeout = 5 * time.Second

func isWildcard(domain string) bool { return strings.HasPrefix(domain, "*.") }

// dnsRetry is when a domain whose DNS check failed is checked again, and how many checks
// failed in a row.
type dnsRetry struct {
	failures int
	at       time.Time
}

// ready reports whether a domain's certificate may be ordered: its DNS points where the API
// told its owner to, and a wildcard's DNS-01 validation can be answered. When not, its status
// says what is wrong and when it is checked again (certmagic's backoff), and no order is
// placed.
func (m *Manager) ready(ctx context.Context, d api.ReservedDomain) bool {
	name, now := strings.ToLower(d.Domain), m.opts.Now()
	m.mu.Lock()
	retry := m.retries[name]
	m.mu.Unlock()
	if now.Before(retry.at) {
		return false
	}
	code, msg := m.checkDNS(ctx, d)
	m.mu.Lock()
	if code == "" {
		delete(m.retries, name)
		m.mu.Unlock()
		return true
	}
	at := now.Add(retryIntervals[min(retry.failures, len(retryIntervals)-1)])
	m.retries[name] = dnsRetry{failures: retry.failures + 1, at: at}
	m.mu.Unlock()
	m.record(ctx, name, failed(now, code, msg, at))
	return false
}

// checkDNS checks the CNAME the API handed out for d: a brought domain's name at its
// cname_target; a wildcard's _acme-challenge name at its acme_challenge_cname_target, which
// this replica's DNS server must answer for. It returns an error code and message, or "".
func (m *Manager) checkDNS(ctx context.Context, d api.ReservedDomain) (code, msg string) {
	name, target := d.Domain, d.CNAMETarget
	if isWildcard(d.Domain) {
		if m.opts.ChallengeRecords == nil {
			return codeInternal, "A wildcard domain is validated by DNS-01, which this server does not answer: its DNS server is off (--dns-listen)."
		}
		if d.ACMEChallengeCNAMETarget == nil {
			return codeInternal, fmt.Sprintf("%s has no acme_challenge_cname_target to validate it through.", d.Domain)
		}
		name, target = "_acme-challenge."+strings.TrimPrefix(d.Domain, "*."), d.ACMEChallengeCNAMETarget
	}
	if target == nil {
		return "", "" // service-owned: the service runs its DNS
	}
	found, err := m.lookupCNAME(ctx, name)
	switch {
	case err != nil:
		return codeInternal, fmt.Sprintf("The CNAME record of %s could not be checked: %v.", name, err)
	case found == "" && !isWildcard(d.Domain) && m.sameAddresses(ctx, name, *target):
		return "", "" // a flattened CNAME (an ALIAS at a zone apex, where no CNAME can be)
	case found == "" && !isWildcard(d.Domain):
		return codeDNS, fmt.Sprintf("%s has no CNAME record: it must be a CNAME to %s, or at a zone apex have its addresses (a flattened CNAME or ALIAS record).", name, *target)
	case found == "":
		return codeDNS, fmt.Sprintf("%s has no CNAME record: it must be a CNAME to %s.", name, *target)
	case !strings.EqualFold(found, *target):
		return codeDNS, fmt.Sprintf("%s is a CNAME to %s: it must be a CNAME to %s.", name, found, *target)
	}
	return "", ""
}

// lookupCNAME asks the resolver (Options.Resolver, else the system's) for the CNAME record
// of name, and returns its target without the final dot; "" when it has none.
func (m *Manager) lookupCNAME(ctx context.Context, name string) (string, error) {
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeCNAME)
	var err error
	for _, server := range m.resolvers() {
		var in *dns.Msg
		if in, err = exchange(ctx, q, server); err != nil {
			continue
		}
		if in.Rcode != dns.RcodeSuccess && in.Rcode != dns.RcodeNameError {
			err = fmt.Errorf("the resolver %s answered %s", server, dns.RcodeToString[in.Rcode])
			continue
		}
		for _, rr := range in.Answer {
			if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, q.Question[0].Name) {
				return strings.TrimSuffix(strings.ToLower(c.Target), "."), nil
			}
		}
		return "", nil
	}
	if err == nil {
		err = errors.New("no resolver")
	}
	return "", err
}

// sameAddresses reports whether name has one of target's IPv4 or IPv6 addresses.
func (m *Manager) sameAddresses(ctx context.Context, name, target string) bool {
	theirs := m.lookupAddrs(ctx, target)
	for _, a := range m.lookupAddrs(ctx, name) {
		if slices.Contains(theirs, a) {
			return true
		}
	}
	return false
}

// lookupAddrs asks the resolver for the A and AAAA records of name (through its CNAMEs).
func (m *Manager) lookupAddrs(ctx context.Context, name string) []netip.Addr {
	var addrs []netip.Addr
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), qtype)
		for _, server := range m.resolvers() {
			in, err := exchange(ctx, q, server)
			if err != nil {
				continue
			}
			for _, rr := range in.Answer {
				switch rr := rr.(type) {
				case *dns.A:
					addrs = append(addrs, netip.AddrFrom4([4]byte(rr.A.To4())))
				case *dns.AAAA:
					addrs = append(addrs, netip.AddrFrom16([16]byte(rr.AAAA.To16())))
				}
			}
			break
		}
	}
	return addrs
}

// exchange sends q over UDP, and again over TCP when the answer was truncated.
func exchange(ctx context.Context, q *dns.Msg, server string) (*dns.Msg, error) {
	in, _, err := (&dns.Client{Net: "udp", Timeout: dnsTimeout}).ExchangeContext(ctx, q, server)
	if err == nil && in.Truncated {
		in, _, err = (&dns.Client{Net: "tcp", Timeout: dnsTimeout}).ExchangeContext(ctx, q, server)
	}
	return in, err
}

// resolvers are the DNS resolvers of the CNAME checks and of certmagic's propagation checks.
func (m *Manager) resolvers() []string {
	if m.opts.Resolver != "" {
		return []string{m.opts.Resolver}
	}
	return certmagic.RecursiveNameservers(nil)
}

// challengeTarget is the acme_challenge_cname_target of the reserved domain named domain.
func (m *Manager) challengeTarget(ctx context.Context, domain string) (string, error) {
	var d api.ReservedDomain
	err := m.opts.Store.Read(ctx, func(tx store.Tx) error {
		o, err := tx.Lookup(ctx, kinds.ReservedDomainKey(domain))
		if err != nil {
			return err
		}
		return json.Unmarshal(o.Doc, &d)
	})
	if err != nil {
		return "", fmt.Errorf("the reserved domain %s: %w", domain, err)
	}
	if d.ACMEChallengeCNAMETarget == nil {
		return "", fmt.Errorf("%s has no acme_challenge_cname_target", domain)
	}
	return *d.ACMEChallengeCNAMETarget, nil
}

// dns01Solver solves the DNS-01 challenges of wildcard domains with certmagic's solver: the
// TXT record goes to the domain's acme_challenge_cname_target, a name of the zone that
// Warren's DNS server answers for and the domain's _acme-challenge name points at (certmagic's
// solver does not follow that CNAME itself: each target has a solver that overrides the name).
type dns01Solver struct {
	m *Manager

	mu      sync.Mutex
	solvers map[string]*certmagic.DNS01Solver // by the identifier's name
}

// solver is the solver of chal's identifier, made when its challenge is presented (so that
// the record is cleaned up even if the domain went meanwhile).
func (s *dns01Solver) solver(ctx context.Context, chal acme.Challenge) (*certmagic.DNS01Solver, error) {
	s.mu.Lock()
	sv, ok := s.solvers[chal.Identifier.Value]
	s.mu.Unlock()
	if ok {
		return sv, nil
	}
	target, err := s.m.challengeTarget(ctx, "*."+chal.Identifier.Value)
	if err != nil {
		return nil, err
	}
	var resolvers []string
	if s.m.opts.Resolver != "" {
		resolvers = []string{s.m.opts.Resolver}
	}
	sv = &certmagic.DNS01Solver{DNSManager: certmagic.DNSManager{
		DNSProvider: s.m.opts.ChallengeRecords, Resolvers: resolvers, OverrideDomain: target, Logger: s.m.opts.Log,
	}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.solvers[chal.Identifier.Value]; ok {
		return cur, nil
	}
	s.solvers[chal.Identifier.Value] = sv
	return sv, nil
}

// Present writes the challenge's TXT record (acmez.Solver).
func (s *dns01Solver) Present(ctx context.Context, chal acme.Challenge) error {
	sv, err := s.solver(ctx, chal)
	if err != nil {
		return err
	}
	return sv.Present(ctx, chal)
}

// Wait waits until the resolver answers the record (acmez.Waiter).
func (s *dns01Solver) Wait(ctx context.Context, chal acme.Challenge) error {
	sv, err := s.solver(ctx, chal)
	if err != nil {
		return err
	}
	return sv.Wait(ctx, chal)
}

// CleanUp deletes the challenge's TXT record (acmez.Solver).
func (s *dns01Solver) CleanUp(ctx context.Context, chal acme.Challenge) error {
	sv, err := s.solver(ctx, chal)
	if err != nil {
		return err
	}
	return sv.CleanUp(ctx, chal)
}
