package acme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/acmedns"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// LetsEncrypt is the directory of the letsencrypt authority unless --acme-directory names
// another.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// Options configure a Manager.
type Options struct {
	Store store.Store
	// Directories are the ACME directory URLs by the policies' authority; letsencrypt is
	// LetsEncrypt unless given.
	Directories map[string]string
	// Roots verify the ACME directories; nil for the system's.
	Roots *x509.CertPool
	// HTTPAddr and TLSAddr are the edge's HTTP and HTTPS listen addresses, where the
	// authority validates HTTP-01 and TLS-ALPN-01 (the edge answers through the Manager);
	// "" when that listener is off, and its challenge is not offered.
	HTTPAddr, TLSAddr string
	Log               *zap.Logger
	// ChallengeRecords are the records of Warren's DNS server (--dns-listen), through which
	// wildcard domains are validated by DNS-01; nil when it is off, and their status says so.
	ChallengeRecords *acmedns.Records
	// Resolver (host:port) checks the CNAMEs of domains before their orders, and the
	// propagation of DNS-01 records; "" for the system's.
	Resolver string
	// Interval is how often the reserved domains are read for new policies (1 minute).
	Interval time.Duration
	// RenewCheckInterval is how often the certificates are checked for renewal (certmagic's
	// default, 10 minutes, when 0): tests of short-lived certificates shorten it.
	RenewCheckInterval time.Duration
	// Now stamps the status (time.Now).
	Now func() time.Time
}

// managedDomain is a domain handed to certmagic: under which policy, and how to stop its
// orders.
type managedDomain struct {
	policy api.CertificateManagementPolicy
	stop   context.CancelFunc
}

// Manager obtains and renews the certificates of the reserved domains that have a
// certificate management policy, records how that goes in their
// certificate_management_status, and serves them to the edge (edge.ManagedCertificates).
type Manager struct {
	opts  Options
	cache *certmagic.Cache

	mu      sync.Mutex
	configs map[configKey]*certmagic.Config
	issuers []*certmagic.ACMEIssuer
	managed map[string]managedDomain // domains handed to certmagic
	retries map[string]dnsRetry      // domains whose DNS check failed, not handed to certmagic
	dns01   *dns01Solver
	// onlyChallenge, when set, is the one challenge type offered (tests of each).
	onlyChallenge string
}

var _ edge.ManagedCertificates = (*Manager)(nil)

// NewManager returns a Manager; Run starts its work.
func NewManager(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dirs := map[string]string{"letsencrypt": LetsEncrypt}
	for k, v := range opts.Directories {
		dirs[k] = v
	}
	opts.Directories = dirs
	m := &Manager{opts: opts, configs: map[configKey]*certmagic.Config{}, managed: map[string]managedDomain{}, retries: map[string]dnsRetry{}}
	m.dns01 = &dns01Solver{m: m, solvers: map[string]*certmagic.DNS01Solver{}}
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(c certmagic.Certificate) (*certmagic.Config, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			// The storage is one: any config whose challenges fit finds what to renew.
			wildcard := slices.ContainsFunc(c.Names, isWildcard)
			for k, cfg := range m.configs {
				if k.dns01 == wildcard {
					return cfg, nil
				}
			}
			return nil, errors.New("acme: no configuration yet")
		},
		RenewCheckInterval: opts.RenewCheckInterval,
		Logger:             opts.Log,
	})
	return m
}

// Run manages the reserved domains until ctx ends: at once, then every Interval.
func (m *Manager) Run(ctx context.Context) {
	defer m.cache.Stop()
	defer func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, md := range m.managed {
			md.stop()
		}
	}()
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		if err := m.Sync(ctx); err != nil && ctx.Err() == nil {
			m.opts.Log.Warn("acme: reading the reserved domains failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync hands certmagic every reserved domain with a policy that it does not manage yet, and
// stops managing those deleted or whose policy was removed or changed (a changed one starts
// again under its new policy). A domain is handed over once its DNS is right (ready).
func (m *Manager) Sync(ctx context.Context) error {
	var objs []*store.Object
	err := m.opts.Store.Read(ctx, func(tx store.Tx) (err error) {
		objs, err = tx.List(ctx, store.ListQuery{Kind: kinds.ReservedDomain, AllAccounts: true, DocsOnly: true})
		return err
	})
	if err != nil {
		return err
	}
	want := map[string]api.CertificateManagementPolicy{}
	domains := map[string]api.ReservedDomain{}
	for _, o := range objs {
		var d api.ReservedDomain
		if err := json.Unmarshal(o.Doc, &d); err != nil || d.CertificateManagementPolicy == nil {
			continue
		}
		want[strings.ToLower(d.Domain)] = *d.CertificateManagementPolicy
		domains[strings.ToLower(d.Domain)] = d
	}
	m.mu.Lock()
	for name := range m.retries {
		if _, ok := want[name]; !ok {
			delete(m.retries, name)
		}
	}
	var gone []certmagic.SubjectIssuer
	for name, md := range m.managed {
		if p, ok := want[name]; !ok || p != md.policy {
			md.stop()
			delete(m.managed, name)
			gone = append(gone, certmagic.SubjectIssuer{Subject: name})
		}
	}
	m.mu.Unlock()
	m.cache.RemoveManaged(gone)
	for name, policy := range want {
		m.mu.Lock()
		_, done := m.managed[name]
		m.mu.Unlock()
		if done || !m.ready(ctx, domains[name]) {
			continue
		}
		cfg, err := m.config(policy, isWildcard(name))
		if err != nil {
			m.record(ctx, name, failed(m.opts.Now(), codeInternal, err.Error(), time.Time{}))
			continue
		}
		// Its own context, which outlives this call: ended when the domain goes.
		domainCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		if err := cfg.ManageAsync(domainCtx, []string{name}); err != nil {
			stop()
			m.opts.Log.Warn("acme: managing a domain failed", zap.String("domain", name), zap.Error(err))
			continue
		}
		m.mu.Lock()
		m.managed[name] = managedDomain{policy: policy, stop: stop}
		m.mu.Unlock()
	}
	return nil
}

// configKey names a certmagic configuration: a policy, and whether its challenge is DNS-01
// (wildcard domains, for which certmagic offers it alone) or those of the edge.
type configKey struct {
	policy api.CertificateManagementPolicy
	dns01  bool
}

// config is the certmagic configuration of a policy, made on first use.
func (m *Manager) config(p api.CertificateManagementPolicy, dns01 bool) (*certmagic.Config, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cfg, ok := m.configs[configKey{p, dns01}]; ok {
		return cfg, nil
	}
	dir, ok := m.opts.Directories[p.Authority]
	if !ok {
		return nil, fmt.Errorf("No ACME directory is configured for the authority %q.", p.Authority)
	}
	keyType := certmagic.P256
	if p.PrivateKeyType == "rsa" {
		keyType = certmagic.RSA4096 // the spec's size of a policy's RSA keys
	}
	// A challenge whose edge listener is off is not offered.
	httpHost, httpPort, err := splitPort(m.opts.HTTPAddr)
	if err != nil {
		return nil, err
	}
	_, tlsPort, err := splitPort(m.opts.TLSAddr)
	if err != nil {
		return nil, err
	}
	cfg := certmagic.New(m.cache, certmagic.Config{
		Storage:   NewStorage(m.opts.Store),
		KeySource: certmagic.StandardKeyGenerator{KeyType: keyType},
		OnEvent:   m.onEvent,
		Logger:    m.opts.Log,
	})
	// The challenge ports are the edge's, which listens on them already: certmagic finds
	// them taken and leaves the answers to the edge (HandleHTTPChallenge,
	// ChallengeCertificate), through the storage that every replica shares.
	iss := certmagic.NewACMEIssuer(cfg, certmagic.ACMEIssuer{
		CA: dir, TestCA: dir, Agreed: true, TrustedRoots: m.opts.Roots,
		ListenHost: httpHost, AltHTTPPort: httpPort, AltTLSALPNPort: tlsPort,
		DisableHTTPChallenge:    httpPort == 0 || m.onlyChallenge == "tls-alpn-01",
		DisableTLSALPNChallenge: tlsPort == 0 || m.onlyChallenge == "http-01",
		Logger:                  m.opts.Log,
	})
	if dns01 {
		iss.DNS01Solver = m.dns01
	}
	cfg.Issuers = []certmagic.Issuer{iss}
	m.configs[configKey{p, dns01}] = cfg
	m.issuers = append(m.issuers, iss)
	return cfg, nil
}

// splitPort splits a listen address; "" is no listener (port 0).
func splitPort(addr string) (string, int, error) {
	if addr == "" {
		return "", 0, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("acme: the edge address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	return host, n, err
}

// onEvent records certmagic's progress in the domain's certificate_management_status.
func (m *Manager) onEvent(ctx context.Context, event string, data map[string]any) error {
	name, _ := data["identifier"].(string)
	if name == "" {
		return nil
	}
	now := m.opts.Now()
	switch event {
	case "cert_obtaining":
		m.record(ctx, name, &api.CertificateManagementStatus{ProvisioningJob: &api.ProvisioningJob{
			Msg: "Managed certificate provisioning in progress.", StartedAt: formatTime(now)}})
	case "cert_obtained":
		renews, err := m.renewsAt(ctx, data)
		if err != nil {
			m.opts.Log.Warn("acme: reading an obtained certificate failed", zap.String("domain", name), zap.Error(err))
			return nil
		}
		m.record(ctx, name, &api.CertificateManagementStatus{RenewsAt: ptr(formatTime(renews))})
	case "cert_failed":
		err, _ := data["error"].(error)
		msg := "The certificate could not be obtained."
		if err != nil {
			msg = "The certificate could not be obtained: " + err.Error()
		}
		retries := now.Add(retryAfter(ctx))
		m.record(ctx, name, failed(now, codeInternal, msg, retries))
	}
	return nil
}

// renewsAt is when certmagic renews the certificate an obtained event names: a third of
// its lifetime before it expires (certmagic's default renewal window).
func (m *Manager) renewsAt(ctx context.Context, data map[string]any) (time.Time, error) {
	key, _ := data["certificate_path"].(string)
	b, err := NewStorage(m.opts.Store).Load(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return time.Time{}, errors.New("no PEM certificate")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}, err
	}
	return c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3), nil
}

// retryIntervals are certmagic's waits between attempts at obtaining a certificate
// (async.go: retryIntervals), whose last one repeats: what retries_at reports.
var retryIntervals = []time.Duration{
	time.Minute, 2 * time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	10 * time.Minute, 10 * time.Minute, 20 * time.Minute, 20 * time.Minute, 20 * time.Minute,
	20 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute,
	30 * time.Minute, 30 * time.Minute, time.Hour, time.Hour, time.Hour,
	time.Hour, time.Hour, 2 * time.Hour, 2 * time.Hour, 2 * time.Hour,
	2 * time.Hour, 2 * time.Hour, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour,
	3 * time.Hour, 6 * time.Hour,
}

// retryAfter is the wait before certmagic's next attempt, from the attempts it counted
// before the one that failed.
func retryAfter(ctx context.Context) time.Duration {
	n := 0
	if p, ok := ctx.Value(certmagic.AttemptsCtxKey).(*int); ok && p != nil {
		n = *p
	}
	return retryIntervals[min(n, len(retryIntervals)-1)]
}

func failed(now time.Time, code, msg string, retries time.Time) *api.CertificateManagementStatus {
	job := &api.ProvisioningJob{ErrorCode: &code, Msg: msg, StartedAt: formatTime(now)}
	if !retries.IsZero() {
		job.RetriesAt = ptr(formatTime(retries))
	}
	return &api.CertificateManagementStatus{ProvisioningJob: job}
}

// record writes status into the reserved domain name, if it still has a policy.
func (m *Manager) record(ctx context.Context, name string, status *api.CertificateManagementStatus) {
	err := m.opts.Store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Lookup(ctx, kinds.ReservedDomainKey(name))
		if err != nil {
			return err
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(o.Doc, &d); err != nil {
			return err
		}
		if p := d["certificate_management_policy"]; len(p) == 0 || string(p) == "null" {
			return nil
		}
		if d["certificate_management_status"], err = json.Marshal(status); err != nil {
			return err
		}
		if o.Doc, err = json.Marshal(d); err != nil {
			return err
		}
		return tx.Update(ctx, o)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		m.opts.Log.Warn("acme: recording a certificate status failed", zap.String("domain", name), zap.Error(err))
	}
}

// Certificate returns the managed certificate of host (edge.ManagedCertificates).
func (m *Manager) Certificate(host string) *tls.Certificate {
	m.mu.Lock()
	_, managed := m.managed[host]
	if _, parent, ok := strings.Cut(host, "."); ok && !managed {
		_, managed = m.managed["*."+parent]
	}
	m.mu.Unlock()
	if !managed {
		return nil
	}
	for _, c := range m.cache.AllMatchingCertificates(host) {
		if c.Leaf != nil && time.Now().Before(c.Leaf.NotAfter) {
			return &c.Certificate
		}
	}
	return nil
}

// ChallengeCertificate returns the TLS-ALPN-01 certificate of a validation under way
// (edge.ManagedCertificates).
func (m *Manager) ChallengeCertificate(hello *tls.ClientHelloInfo) *tls.Certificate {
	configs, _ := m.answerers()
	for _, cfg := range configs {
		if cert, err := cfg.GetCertificate(hello); err == nil && cert != nil {
			return cert
		}
	}
	return nil
}

// HandleHTTPChallenge answers an HTTP-01 validation (edge.ManagedCertificates).
func (m *Manager) HandleHTTPChallenge(w http.ResponseWriter, r *http.Request) bool {
	_, issuers := m.answerers()
	for _, iss := range issuers {
		if iss.HandleHTTPChallenge(w, r) {
			return true
		}
	}
	return false
}

// answerers are the configurations and issuers that answer validations, one at least for
// every authority: a validation may be of another replica's order for a domain that this
// replica's Sync has not seen yet, whose answer it finds in the storage they share, under
// the authority's issuer.
func (m *Manager) answerers() ([]*certmagic.Config, []*certmagic.ACMEIssuer) {
	for authority := range m.opts.Directories {
		// The key type makes no difference to the answers.
		if _, err := m.config(api.CertificateManagementPolicy{Authority: authority, PrivateKeyType: "ecdsa"}, false); err != nil {
			m.opts.Log.Warn("acme: configuring an authority failed", zap.String("authority", authority), zap.Error(err))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	configs := make([]*certmagic.Config, 0, len(m.configs))
	for _, cfg := range m.configs {
		configs = append(configs, cfg)
	}
	return configs, append([]*certmagic.ACMEIssuer(nil), m.issuers...)
}

func ptr[T any](v T) *T { return &v }

// formatTime is the API's timestamp form.
func formatTime(t time.Time) string { return api.FormatTime(t) }
