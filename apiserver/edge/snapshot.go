package edge

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"net"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
	"time"
)

// Snapshot is the routing configuration of every account, compiled once and never changed:
// a connection reads the one current when it arrives (Edge.current) and keeps it.
type Snapshot struct {
	Revision int64
	certs    map[string]*tls.Certificate // reserved domain (a name or "*.parent") -> its uploaded certificate
	managed  map[string]bool             // reserved domains with a management policy and no uploaded certificate
	sites    map[string]*site            // hostname of an HTTPS or TLS edge's hostport -> the edge
	tcp      map[string]*tcpEdge         // hostport of a reserved address -> the TCP edge on it
	addrs    map[int]string              // port of every reserved address -> its hostport (the TCP listeners)
	accounts map[string]*accountRules    // account ID -> its IP restrictions of types endpoints and agent

	// breakers are the routes' circuit breakers, which the next snapshot takes over.
	breakers map[breakerKey]*circuitBreaker

	saml map[string]*samlRoute // route ID -> its saml module, for SAMLHandler
}

// site is what serves one hostname on the HTTPS listener: an HTTPS edge or a TLS edge.
type site struct {
	https *httpsEdge
	tls   *tlsEdge
}

// compiled is what every compiled edge and route has: its ID, account, and the error that
// kept it from compiling (then it serves errCompile and nothing else).
type compiled struct {
	id, accountID string
	err           error
}

// accountRules are what an account's traffic is held to: its IP restriction of type
// endpoints (nil when it has none; the agent plane applies type agent itself, on
// /agent/connect) and whether an operator disabled it.
type accountRules struct {
	endpoints *restriction
	disabled  bool
}

// restriction is an account IP restriction compiled.
type restriction struct {
	id       string
	enforced bool
	ips      *ipSet
}

// objects are the stored objects of the routing kinds, by kind and by ID.
type objects struct {
	byKind map[string][]*store.Object
	byID   map[string]*store.Object
}

// load reads every object of kinds.Routing in one read transaction.
func load(ctx context.Context, s store.Store) (*objects, error) {
	o := &objects{byKind: map[string][]*store.Object{}, byID: map[string]*store.Object{}}
	err := s.Read(ctx, func(tx store.Tx) error {
		for kind := range kinds.Routing {
			objs, err := tx.List(ctx, store.ListQuery{Kind: kind, AllAccounts: true})
			if err != nil {
				return fmt.Errorf("edge: list %s: %w", kind, err)
			}
			o.byKind[kind] = objs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, objs := range o.byKind {
		for _, obj := range objs {
			o.byID[obj.ID] = obj
		}
	}
	return o, nil
}

// doc decodes the stored document of the object with this ID and kind, in account.
func (o *objects) doc(id, kind, account string, v any) error {
	obj, ok := o.byID[id]
	if !ok || obj.Kind != kind || obj.AccountID != account {
		return fmt.Errorf("%s %s is not stored", kind, id)
	}
	return json.Unmarshal(obj.Doc, v)
}

// compile builds the snapshot of revision rev from objs. An object that does not compile
// is logged and served as an error (compiled.err); the others are not affected. What lives
// across snapshots (circuit breakers) is taken over from prev, nil for the first; rt is
// what the traffic policies of every snapshot share.
func compile(rev int64, objs *objects, log *zap.Logger, prev *Snapshot, rt policyRuntime) *Snapshot {
	s := &Snapshot{Revision: rev, certs: map[string]*tls.Certificate{}, managed: map[string]bool{}, sites: map[string]*site{},
		tcp: map[string]*tcpEdge{}, addrs: map[int]string{}, accounts: map[string]*accountRules{}}
	c := &compiler{objs: objs, log: log, breakers: map[breakerKey]*circuitBreaker{}, policyRuntime: rt, saml: map[string]*samlRoute{}}
	if prev != nil {
		c.prevBreakers = prev.breakers
	}
	s.saml = c.saml
	for _, o := range objs.byKind[kinds.ReservedDomain] {
		var d api.ReservedDomain
		if err := json.Unmarshal(o.Doc, &d); err != nil {
			continue
		}
		if d.Certificate == nil {
			if d.CertificateManagementPolicy != nil {
				s.managed[strings.ToLower(d.Domain)] = true
			}
			continue
		}
		cert, err := c.certificate(d.Certificate.ID, o.AccountID)
		if err != nil {
			c.logErr(kinds.ReservedDomain, o.ID, err)
			continue
		}
		s.certs[strings.ToLower(d.Domain)] = cert
	}
	for _, o := range objs.byKind[kinds.ReservedAddr] {
		var a api.ReservedAddr
		if err := json.Unmarshal(o.Doc, &a); err != nil {
			continue
		}
		if _, port, err := net.SplitHostPort(a.Addr); err == nil {
			if p, err := parsePort(port); err == nil {
				s.addrs[p] = a.Addr
			}
		}
	}
	routes := map[string][]*store.Object{}
	for _, o := range objs.byKind[kinds.HTTPSEdgeRoute] {
		routes[o.ParentID] = append(routes[o.ParentID], o)
	}
	for _, o := range objs.byKind[kinds.HTTPSEdge] {
		e := c.httpsEdge(o, routes[o.ID])
		for _, host := range e.hosts {
			s.sites[host] = &site{https: e}
		}
	}
	for _, o := range objs.byKind[kinds.TLSEdge] {
		e := c.tlsEdge(o)
		for _, host := range e.hosts {
			s.sites[host] = &site{tls: e}
		}
	}
	for _, o := range objs.byKind[kinds.TCPEdge] {
		e := c.tcpEdge(o)
		for _, hp := range e.hostports {
			s.tcp[hp] = e
		}
	}
	for _, o := range objs.byKind[kinds.IPRestriction] {
		var x api.IPRestriction
		if err := json.Unmarshal(o.Doc, &x); err != nil || x.Type != "endpoints" {
			continue
		}
		ips, err := c.ipSet(o.AccountID, api.RefIDs(x.IPPolicies))
		if err != nil {
			// A restriction that cannot be read blocks all rather than none.
			c.logErr(kinds.IPRestriction, o.ID, err)
			ips = &ipSet{}
		}
		s.account(o.AccountID).endpoints = &restriction{id: o.ID, enforced: x.Enforced, ips: ips}
	}
	for _, o := range objs.byKind[kinds.Account] {
		var a api.Account
		if err := json.Unmarshal(o.Doc, &a); err == nil && a.Disabled {
			s.account(o.ID).disabled = true
		}
	}
	s.breakers = c.breakers
	return s
}

// compiler holds what compiling one snapshot shares.
type compiler struct {
	objs *objects
	log  *zap.Logger
	// breakers are the circuit breakers of the snapshot being built, prevBreakers the
	// previous snapshot's, which it takes over where unchanged.
	breakers, prevBreakers map[breakerKey]*circuitBreaker
	policyRuntime
	saml map[string]*samlRoute // the routes' saml modules compiled, by route ID
}

// policyRuntime is what the traffic policies of every snapshot share: the rate-limit
// buckets (kept across snapshots) and the clock.
type policyRuntime struct {
	limits *trafficpolicy.Limits
	now    func() time.Time
}

func (c *compiler) logErr(kind, id string, err error) {
	c.log.Error("edge: an object does not compile; its traffic gets an error page",
		zap.String("kind", kind), zap.String("id", id), zap.Error(err))
}

// certificate loads an uploaded TLS certificate with its private key.
func (c *compiler) certificate(id, account string) (*tls.Certificate, error) {
	var doc api.TLSCertificate
	if err := c.objs.doc(id, kinds.TLSCertificate, account, &doc); err != nil {
		return nil, err
	}
	var secret struct {
		PrivateKeyPEM string `json:"private_key_pem"`
	}
	if err := json.Unmarshal(c.objs.byID[id].Secret, &secret); err != nil {
		return nil, fmt.Errorf("tls_certificate %s: its private key: %w", id, err)
	}
	cert, err := tls.X509KeyPair([]byte(doc.CertificatePEM), []byte(secret.PrivateKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("tls_certificate %s: %w", id, err)
	}
	return &cert, nil
}

// caPool parses the certificate authorities of a mutual_tls module.
func (c *compiler) caPool(account string, ids []string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for _, id := range ids {
		var ca api.CertificateAuthority
		if err := c.objs.doc(id, kinds.CertificateAuthority, account, &ca); err != nil {
			return nil, err
		}
		if !pool.AppendCertsFromPEM([]byte(ca.CAPEM)) {
			return nil, fmt.Errorf("certificate_authority %s: no certificate in its PEM", id)
		}
	}
	return pool, nil
}

// ipSet gathers the rules of IP policies.
func (c *compiler) ipSet(account string, policyIDs []string) (*ipSet, error) {
	set := &ipSet{}
	for _, id := range policyIDs {
		if o, ok := c.objs.byID[id]; !ok || o.Kind != kinds.IPPolicy || o.AccountID != account {
			return nil, fmt.Errorf("ip_policy %s is not stored", id)
		}
	}
	for _, o := range c.objs.byKind[kinds.IPPolicyRule] {
		if o.AccountID != account {
			continue
		}
		var rule api.IPPolicyRule
		if err := json.Unmarshal(o.Doc, &rule); err != nil {
			return nil, err
		}
		if !slices.Contains(policyIDs, rule.IPPolicy.ID) {
			continue
		}
		r, err := rules.StoredIPRule(&rule)
		if err != nil {
			return nil, err
		}
		set.rules = append(set.rules, r)
	}
	return set, nil
}

// tlsVersion is the crypto/tls version of a min_version ("1.0" … "1.3"); "" is TLS 1.2,
// the edge's floor when a module does not say.
func tlsVersion(v *string) (uint16, error) {
	if v == nil || *v == "" {
		return tls.VersionTLS12, nil
	}
	switch *v {
	case "1.0":
		return tls.VersionTLS10, nil
	case "1.1":
		return tls.VersionTLS11, nil
	case "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("min_version %q is not a TLS version", *v)
}

// hostsOf returns the lower-case hostnames of hostports ("name:443").
func hostsOf(hostports []string) []string {
	var out []string
	for _, hp := range hostports {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			host = hp
		}
		out = append(out, strings.ToLower(host))
	}
	return out
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, errors.New("not a port")
	}
	return p, nil
}

// byRouteOrder sorts routes in match order: exact paths first, then prefixes longest first;
// ties (equal lengths) by ID, so the order never depends on storage.
func byRouteOrder(a, b *route) int {
	if a.exact != b.exact {
		if a.exact {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(len(b.match), len(a.match)); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// account is the rules of an account, added when it has none yet (while compiling).
func (s *Snapshot) account(id string) *accountRules {
	a := s.accounts[id]
	if a == nil {
		a = &accountRules{}
		s.accounts[id] = a
	}
	return a
}

// accountDisabled says whether an operator disabled the account: its edges and endpoints
// refuse every visitor (errAccountDisabled) until it is enabled again.
func (s *Snapshot) accountDisabled(id string) bool {
	a := s.accounts[id]
	return a != nil && a.disabled
}

// lookupSite finds the site of host: the name itself, else the wildcard of its parent.
func (s *Snapshot) lookupSite(host string) *site {
	if st, ok := s.sites[host]; ok {
		return st
	}
	if _, parent, ok := strings.Cut(host, "."); ok {
		return s.sites["*."+parent]
	}
	return nil
}

// isManaged reports whether host's certificate is a managed one: its reserved domain, else
// the wildcard reservation of its parent, has a management policy.
func (s *Snapshot) isManaged(host string) bool {
	if s.managed[host] {
		return true
	}
	_, parent, ok := strings.Cut(host, ".")
	return ok && s.managed["*."+parent]
}

// certificate finds the uploaded certificate for host: its reserved domain's, else the
// wildcard reservation's of its parent.
func (s *Snapshot) certificate(host string) *tls.Certificate {
	if c, ok := s.certs[host]; ok {
		return c
	}
	if _, parent, ok := strings.Cut(host, "."); ok {
		return s.certs["*."+parent]
	}
	return nil
}
