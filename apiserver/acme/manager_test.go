package acme

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"

	"github.com/warrenhq/terraform-provider-warren/apiserver/acmedns"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// pebble is an ACME CA in-process: its directory URL, the roots that reach it, the root
// its certificates chain to, and how many orders it created.
type pebble struct {
	directory string
	roots     *x509.CertPool
	root      *x509.Certificate
	orders    atomic.Int32
}

// startPebble runs Pebble with its validator dialing the edge's ports and resolving names
// through resolver (TCP); its certificates are valid for validity (0 for its default, 90
// days).
func startPebble(t *testing.T, httpPort, tlsPort int, resolver string, validity time.Duration) *pebble {
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	// One profile: Pebble picks among its profiles at random for an order that names none.
	profile := ca.Profile{Description: "default", ValidityPeriod: uint64(validity / time.Second)}
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": profile})
	validator := va.New(logger, httpPort, tlsPort, false, resolver, store)
	// No Retry-After on pending authorizations and orders: the client polls every 250 ms.
	front := wfe.New(logger, store, validator, authority, nil, false, false, 0, 0)
	p := &pebble{root: authority.GetRootCert(0).Cert}
	var newOrder atomic.Pointer[string]
	handler := front.Handler()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := newOrder.Load()
		if u == nil || r.Method != http.MethodPost || r.URL.Path != *u {
			handler.ServeHTTP(w, r)
			return
		}
		// Pebble rejects 5% of good nonces as bad, and the client sends the order again:
		// only a 201 is an order.
		rec := &statusRecorder{ResponseWriter: w}
		handler.ServeHTTP(rec, r)
		if rec.status == http.StatusCreated {
			p.orders.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	p.directory = srv.URL + wfe.DirectoryPath
	p.roots = x509.NewCertPool()
	p.roots.AddCert(srv.Certificate())
	// Orders are counted at the directory's newOrder URL.
	var dir struct{ NewOrder string }
	resp, err := srv.Client().Get(p.directory)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&dir); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dir.NewOrder)
	if err != nil {
		t.Fatal(err)
	}
	newOrder.Store(&u.Path)
	return p
}

// statusRecorder notes the status of the response it writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// managedEnv is a real API server, its edge with a Manager, Warren's DNS server, and Pebble
// validating through the edge's listeners and the DNS server, resolving through resolver.
type managedEnv struct {
	srv      *apiservertest.Server
	edge     *apiservertest.Edge
	mgr      *Manager
	pebble   *pebble
	resolver *testResolver
}

func newManagedEnv(t *testing.T) *managedEnv {
	return newManagedEnvOn(t, apiservertest.Start(t, apiservertest.NoRateLimit), 0)
}

// newManagedEnvOn starts the environment around srv; validity is the lifetime of Pebble's
// certificates (0 for its default, 90 days).
func newManagedEnvOn(t *testing.T, srv *apiservertest.Server, validity time.Duration) *managedEnv {
	_, resolver := startDNS(t, srv)
	opts := Options{Store: srv.Store}
	if validity > 0 {
		// Checked often enough to renew in the last third of their lifetime.
		opts.RenewCheckInterval = validity / 50
	}
	mgr := NewManager(opts)
	e := srv.StartEdge(t, func(o *edge.Options) { o.Managed = mgr })
	_, httpPort, _ := splitPort(e.HTTP)
	_, tlsPort, _ := splitPort(e.HTTPS)
	p := startPebble(t, httpPort, tlsPort, resolver.addr, validity)
	m := &managedEnv{srv: srv, edge: e, mgr: mgr, pebble: p, resolver: resolver}
	m.useEdge(t, mgr, e)
	return m
}

// useEdge points a Manager at Pebble, at the edge e that answers its challenges, and at
// Warren's DNS server (its records in the Manager's store) through the test resolver.
func (m *managedEnv) useEdge(t *testing.T, mgr *Manager, e *apiservertest.Edge) {
	mgr.opts.Directories["letsencrypt"] = m.pebble.directory
	mgr.opts.Roots, mgr.opts.HTTPAddr, mgr.opts.TLSAddr = m.pebble.roots, e.HTTP, e.HTTPS
	mgr.opts.ChallengeRecords = acmedns.NewRecords(mgr.opts.Store, strings.TrimSuffix(m.resolver.acmeZone, "."))
	mgr.opts.Resolver = m.resolver.addr
	t.Cleanup(mgr.cache.Stop)
}

// replica starts another replica's edge and Manager on st, a store of its own on the
// server's database. Pebble still validates through the first edge, as a load balancer
// would send it to either: the replicas share the challenges through the storage.
func (m *managedEnv) replica(t *testing.T, st store.Store) (*apiservertest.Edge, *Manager) {
	mgr := NewManager(Options{Store: st})
	e := m.srv.StartReplicaEdge(t, st, func(o *edge.Options) { o.Managed = mgr })
	m.useEdge(t, mgr, e)
	return e, mgr
}

// reserve reserves domain with a management policy of authority letsencrypt (Pebble here) and returns its ID.
// Its owner points its DNS where the API says: the CNAME records are set.
func (m *managedEnv) reserve(t *testing.T, domain string) string {
	body, _ := json.Marshal(map[string]any{"domain": domain,
		"certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}})
	req, _ := http.NewRequest("POST", m.srv.URL+"/reserved_domains", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m.srv.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Service-Version", "2")
	var out api.ReservedDomain
	m.do(t, req, &out)
	m.resolver.pointAt(out)
	return out.ID
}

func (m *managedEnv) do(t *testing.T, req *http.Request, out any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// status reads a reserved domain's certificate_management_status through the API.
func (m *managedEnv) status(t *testing.T, id string) *api.CertificateManagementStatus {
	return m.domain(t, id).CertificateManagementStatus
}

// domain reads a reserved domain through the API.
func (m *managedEnv) domain(t *testing.T, id string) api.ReservedDomain {
	req, _ := http.NewRequest("GET", m.srv.URL+"/reserved_domains/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+m.srv.APIKey)
	req.Header.Set("Service-Version", "2")
	var d api.ReservedDomain
	m.do(t, req, &d)
	return d
}

// verify connects to the edge's HTTPS listener as domain and verifies the certificate it
// serves against Pebble's root.
func (m *managedEnv) verify(domain string) error {
	_, err := m.served(m.edge.HTTPS, domain)
	return err
}

// served is the certificate that the HTTPS listener at addr serves for domain, verified
// against Pebble's root.
func (m *managedEnv) served(addr, domain string) (*x509.Certificate, error) {
	roots := x509.NewCertPool()
	roots.AddCert(m.pebble.root)
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: domain, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

func TestManagedCertificate(t *testing.T) {
	for _, c := range []struct{ name, disable string }{{"http-01", "tls-alpn-01"}, {"tls-alpn-01", "http-01"}} {
		t.Run(c.name, func(t *testing.T) {
			m := newManagedEnv(t)
			m.mgr.onlyChallenge = c.name
			domain := "app-" + c.name + ".test"
			if err := m.verify(domain); err == nil {
				t.Fatal("a certificate is served before one was obtained")
			}
			id := m.reserve(t, domain)
			if err := m.mgr.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			apiservertest.WaitUntil(t, "the certificate is issued", func() bool {
				s := m.status(t, id)
				return s != nil && s.RenewsAt != nil
			})
			if s := m.status(t, id); s.ProvisioningJob != nil {
				t.Fatalf("an issued certificate's status has a provisioning job: %+v", s.ProvisioningJob)
			}
			apiservertest.WaitUntil(t, "the edge serves the certificate", func() bool { return m.verify(domain) == nil })

			// A domain released is no longer served with its managed certificate.
			req, _ := http.NewRequest("DELETE", m.srv.URL+"/reserved_domains/"+id, nil)
			req.Header.Set("Authorization", "Bearer "+m.srv.APIKey)
			req.Header.Set("Service-Version", "2")
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE: %v %v", resp, err)
			}
			resp.Body.Close()
			if err := m.mgr.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := m.verify(domain); err == nil {
				t.Fatal("a released domain is still served with its managed certificate")
			}
		})
	}
}

func TestManagedCertificateFailure(t *testing.T) {
	m := newManagedEnv(t)
	id := m.reserve(t, "nowhere.test")
	if err := m.mgr.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	apiservertest.WaitUntil(t, "the failure is recorded", func() bool {
		s := m.status(t, id)
		return s != nil && s.ProvisioningJob != nil && s.ProvisioningJob.ErrorCode != nil
	})
	job := m.status(t, id).ProvisioningJob
	if *job.ErrorCode != "INTERNAL_ERROR" || !strings.Contains(job.Msg, "nowhere.test") || job.StartedAt == "" || job.RetriesAt == nil || *job.RetriesAt <= job.StartedAt {
		t.Fatalf("provisioning job: %+v (retries_at %v)", job, job.RetriesAt)
	}
}
