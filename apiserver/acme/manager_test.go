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
	"strings"
	"testing"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// pebble is an ACME CA in-process: its directory URL, the roots that reach it, and the
// root its certificates chain to.
type pebble struct {
	directory string
	roots     *x509.CertPool
	root      *x509.Certificate
}

// startPebble runs Pebble with its validator dialing the edge's ports and resolving names
// through resolver (TCP).
func startPebble(t *testing.T, httpPort, tlsPort int, resolver string) *pebble {
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, tlsPort, false, resolver, store)
	front := wfe.New(logger, store, validator, authority, nil, false, false, 3, 5)
	srv := httptest.NewTLSServer(front.Handler())
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return &pebble{directory: srv.URL + wfe.DirectoryPath, roots: roots, root: authority.GetRootCert(0).Cert}
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
	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	records, resolver := startDNS(t, srv)
	mgr := NewManager(Options{Store: srv.Store, ChallengeRecords: records, Resolver: resolver.addr})
	e := srv.StartEdge(t, func(o *edge.Options) { o.Managed = mgr })
	_, httpPort, _ := splitPort(e.HTTP)
	_, tlsPort, _ := splitPort(e.HTTPS)
	p := startPebble(t, httpPort, tlsPort, resolver.addr)
	mgr.opts.Directories["letsencrypt"] = p.directory
	mgr.opts.Roots, mgr.opts.HTTPAddr, mgr.opts.TLSAddr = p.roots, e.HTTP, e.HTTPS
	t.Cleanup(mgr.cache.Stop)
	return &managedEnv{srv: srv, edge: e, mgr: mgr, pebble: p, resolver: resolver}
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
	roots := x509.NewCertPool()
	roots.AddCert(m.pebble.root)
	c, err := tls.Dial("tcp", m.edge.HTTPS, &tls.Config{ServerName: domain, RootCAs: roots})
	if err != nil {
		return err
	}
	return c.Close()
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
