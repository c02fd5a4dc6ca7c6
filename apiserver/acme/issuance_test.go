package acme

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// TestManagedCertificateKeyType: a managed certificate has its policy's key type: ECDSA
// P-256, or RSA of 4096 bits (details.md).
func TestManagedCertificateKeyType(t *testing.T) {
	m := newManagedEnv(t, 0)
	m.reserveKey(t, "ecdsa.test", "ecdsa")
	m.reserveKey(t, "rsa.test", "rsa")
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
	m := newManagedEnv(t, 0)
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
