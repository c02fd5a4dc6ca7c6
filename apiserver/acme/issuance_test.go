package acme

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// TestManagedCertificateKeyType: a managed certificate has its policy's key type: ECDSA
// P-256, or RSA of 4096 bits (details.md).
func TestManagedCertificateKeyType(t *testing.T) {
	m := newManagedEnv(t)
	m.reserve(t, "ecdsa.test")
	rsaID := m.reserve(t, "rsa.test")
	var d struct{ ID string }
	m.call(t, "PATCH", "/reserved_domains/"+rsaID, map[string]any{
		"certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"}}, &d)
	syncNow(t, m.mgr)
	for domain, want := range map[string]string{"ecdsa.test": "ECDSA P-256", "rsa.test": "RSA 4096"} {
		var c *x509.Certificate
		apiservertest.WaitUntil(t, "the edge serves "+domain, func() bool {
			c, _ = m.served(m.edge.HTTPS, domain)
			return c != nil
		})
		got := c.PublicKeyAlgorithm.String()
		switch k := c.PublicKey.(type) {
		case *ecdsa.PublicKey:
			got += " " + k.Curve.Params().Name
		case *rsa.PublicKey:
			got += " " + strconv.Itoa(k.N.BitLen())
		}
		if got != want {
			t.Errorf("%s: the certificate's key is %s, want %s", domain, got, want)
		}
	}
}

// TestUploadedCertificateWins: once a managed domain is given an uploaded certificate, the
// edge serves that one, before the Manager even lets the managed one go.
func TestUploadedCertificateWins(t *testing.T) {
	m := newManagedEnv(t)
	domain := "upload.test"
	id := m.reserve(t, domain)
	syncNow(t, m.mgr)
	apiservertest.WaitUntil(t, "the edge serves the managed certificate", func() bool { return m.verify(domain) == nil })

	leaf, certPEM, keyPEM := selfSigned(t, domain)
	var cert struct{ ID string }
	m.call(t, "POST", "/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM}, &cert)
	var d struct{ ID string }
	m.call(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": cert.ID}, &d)
	servesUploaded := func() bool {
		c, err := tls.Dial("tcp", m.edge.HTTPS, &tls.Config{ServerName: domain, InsecureSkipVerify: true})
		if err != nil {
			return false
		}
		defer c.Close()
		return bytes.Equal(c.ConnectionState().PeerCertificates[0].Raw, leaf.Raw)
	}
	apiservertest.WaitUntil(t, "the edge serves the uploaded certificate", servesUploaded)
	syncNow(t, m.mgr)
	if !servesUploaded() {
		t.Fatal("the edge no longer serves the uploaded certificate once the Manager let the domain go")
	}
}

// call sends in (nil for no body) to the API and decodes its answer into out.
func (m *managedEnv) call(t *testing.T, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, m.srv.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+m.srv.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Service-Version", "2")
	m.do(t, req, out)
}

// selfSigned is a self-signed certificate for domain, and its certificate and key PEM.
func selfSigned(t *testing.T, domain string) (*x509.Certificate, string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: domain}, DNSNames: []string{domain},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return leaf, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// TestFailureBackoff: each failed attempt at a certificate reports, in retries_at, the
// next one after a longer wait: from a minute up to six hours.
func TestFailureBackoff(t *testing.T) {
	m := newManagedEnv(t)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.mgr.opts.Now = apiservertest.NewClock(start).Now
	id := m.reserve(t, "backoff.test")
	for _, c := range []struct {
		attempts int
		wait     time.Duration
	}{{0, time.Minute}, {1, 2 * time.Minute}, {4, 10 * time.Minute}, {7, 20 * time.Minute}, {17, time.Hour}, {31, 6 * time.Hour}, {100, 6 * time.Hour}} {
		attempts := c.attempts
		ctx := context.WithValue(t.Context(), certmagic.AttemptsCtxKey, &attempts)
		_ = m.mgr.onEvent(ctx, "cert_failed", map[string]any{"identifier": "backoff.test", "error": errors.New("the authority is down")})
		job := m.status(t, id).ProvisioningJob
		if job == nil || job.RetriesAt == nil || *job.RetriesAt != formatTime(start.Add(c.wait)) || job.StartedAt != formatTime(start) {
			t.Fatalf("after %d attempts: %+v, want retries_at %s", c.attempts, job, formatTime(start.Add(c.wait)))
		}
	}
}
