package apiserver_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// testCert is a certificate made for a test, with its key in PEM form.
type testCert struct {
	cert   *x509.Certificate
	key    crypto.Signer
	pem    string // the certificate
	keyPEM string // the key, in the format newCert was asked for
}

var (
	testNotBefore = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	testNotAfter  = time.Date(2035, 6, 7, 8, 9, 10, 0, time.UTC)
)

// newCert signs tmpl with parent's key (self-signed when parent is nil) and encodes key as
// keyFormat: "PRIVATE KEY" (PKCS #8), "RSA PRIVATE KEY" (PKCS #1) or "EC PRIVATE KEY" (SEC 1).
func newCert(t *testing.T, tmpl *x509.Certificate, key crypto.Signer, keyFormat string, parent *testCert) *testCert {
	t.Helper()
	if tmpl.SerialNumber == nil {
		tmpl.SerialNumber = big.NewInt(1)
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore, tmpl.NotAfter = testNotBefore, testNotAfter
	}
	parentCert, signer := tmpl, key
	if parent != nil {
		parentCert, signer = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	var keyDER []byte
	switch keyFormat {
	case "PRIVATE KEY":
		keyDER, err = x509.MarshalPKCS8PrivateKey(key)
	case "RSA PRIVATE KEY":
		keyDER = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	case "EC PRIVATE KEY":
		keyDER, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	}
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert: cert, key: key, pem: pemText("CERTIFICATE", der, nil), keyPEM: pemText(keyFormat, keyDER, nil)}
}

func pemText(typ string, der []byte, headers map[string]string) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der, Headers: headers}))
}

func ecKey(t *testing.T) crypto.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func rsaKey(t *testing.T) crypto.Signer {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func edKey(t *testing.T) crypto.Signer {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pki is a root CA, an intermediate CA and three leaves signed by the intermediate.
type pki struct {
	root, intermediate *testCert
	leaf               *testCert // ECDSA (SEC 1 key), with SANs, IPs, usages and a full subject
	rsaLeaf            *testCert // RSA (PKCS #1 key), bare
	edLeaf             *testCert // Ed25519 (PKCS #8 key), bare
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{}
	p.root = newCert(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "Test Root CA", Organization: []string{"Warren Test"}},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, ecKey(t), "EC PRIVATE KEY", nil)
	p.intermediate = newCert(t, &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: "Test Intermediate CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}, rsaKey(t), "RSA PRIVATE KEY", p.root)
	p.leaf = newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(0x054ba70d),
		Subject: pkix.Name{
			CommonName:         "app.example.com",
			Organization:       []string{"Example Org"},
			OrganizationalUnit: []string{"Edge", "Platform"},
			Locality:           []string{"Lyon"},
			Province:           []string{"Rhône"},
			Country:            []string{"FR"},
		},
		DNSNames:           []string{"app.example.com", "*.app.example.com"},
		IPAddresses:        []net.IP{net.ParseIP("192.0.2.7"), net.ParseIP("2001:db8::1")},
		KeyUsage:           x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:        []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		UnknownExtKeyUsage: []asn1.ObjectIdentifier{{1, 2, 3, 4}},
	}, ecKey(t), "EC PRIVATE KEY", p.intermediate)
	p.rsaLeaf = newCert(t, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "rsa.example.com"}}, rsaKey(t), "RSA PRIVATE KEY", p.intermediate)
	p.edLeaf = newCert(t, &x509.Certificate{SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: "ed.example.com"}}, edKey(t), "PRIVATE KEY", p.intermediate)
	return p
}

var tlsCertificateMembers = []string{
	"certificate_pem", "created_at", "description", "extended_key_usages", "id", "issued_at", "issuer_common_name",
	"key_usages", "metadata", "not_after", "not_before", "private_key_type", "serial_number", "subject_alternative_names",
	"subject_common_name", "subject_country", "subject_locality", "subject_organization", "subject_organizational_unit",
	"subject_province", "uri",
}

func TestTLSCertificates(t *testing.T) {
	c := newTC(t)
	p := newPKI(t)
	chain := p.leaf.pem + p.intermediate.pem + p.root.pem

	r := c.req("POST", "/tls_certificates", map[string]any{"certificate_pem": chain, "private_key_pem": p.leaf.keyPEM, "description": "d", "metadata": "m"})
	equal(t, "status", r.status, 201)
	cert := r.body
	id := str(cert["id"])
	if !ids.Valid(id, "cert_") {
		t.Fatalf("id %q", id)
	}
	equal(t, "members", keysOf(cert), tlsCertificateMembers)
	equal(t, "uri", cert["uri"], c.srv.URL+"/tls_certificates/"+id)
	delete(cert, "id")
	delete(cert, "uri")
	delete(cert, "created_at")
	equal(t, "derived members", cert, map[string]any{
		"description":                 "d",
		"metadata":                    "m",
		"certificate_pem":             chain, // echoed as given
		"subject_common_name":         "app.example.com",
		"issuer_common_name":          "Test Intermediate CA",
		"subject_alternative_names":   map[string]any{"dns_names": []any{"app.example.com", "*.app.example.com"}, "ips": []any{"192.0.2.7", "2001:db8::1"}},
		"issued_at":                   nil,
		"not_before":                  "2025-01-02T03:04:05Z",
		"not_after":                   "2035-06-07T08:09:10Z",
		"key_usages":                  []any{"digital_signature", "key_encipherment"},
		"extended_key_usages":         []any{"server_auth", "client_auth", "1.2.3.4"},
		"private_key_type":            "ecdsa",
		"serial_number":               "054ba70d",
		"subject_organization":        "Example Org",
		"subject_organizational_unit": "Edge, Platform",
		"subject_locality":            "Lyon",
		"subject_province":            "Rhône",
		"subject_country":             "FR",
	})

	// The key is never returned: not by create, get or list.
	keyBody := strings.Split(p.leaf.keyPEM, "\n")[1]
	for _, raw := range []string{r.raw, c.req("GET", "/tls_certificates/"+id, nil).raw, c.req("GET", "/tls_certificates", nil).raw} {
		if strings.Contains(raw, "PRIVATE KEY") || strings.Contains(raw, keyBody) || strings.Contains(raw, "private_key_pem") {
			t.Fatalf("the private key leaked: %s", raw)
		}
	}

	// A bare leaf of each key type: lists are [] and subject members "" (present, not omitted).
	for _, tt := range []struct {
		leaf    *testCert
		keyType string
		serial  string
	}{{p.rsaLeaf, "rsa", "03"}, {p.edLeaf, "ed25519", "04"}} {
		got := c.ok(201, "POST", "/tls_certificates", map[string]any{"certificate_pem": tt.leaf.pem + p.intermediate.pem, "private_key_pem": tt.leaf.keyPEM})
		equal(t, "members", keysOf(got), without(tlsCertificateMembers, "description", "metadata"))
		equal(t, "private_key_type", got["private_key_type"], tt.keyType)
		equal(t, "serial_number", got["serial_number"], tt.serial)
		equal(t, "sans", got["subject_alternative_names"], map[string]any{"dns_names": []any{}, "ips": []any{}})
		equal(t, "key_usages", got["key_usages"], []any{})
		equal(t, "extended_key_usages", got["extended_key_usages"], []any{})
		for _, m := range []string{"subject_organization", "subject_organizational_unit", "subject_locality", "subject_province", "subject_country"} {
			equal(t, m, got[m], "")
		}
	}
	// A PKCS #8 ECDSA key, a key preceded by EC PARAMETERS (openssl ecparam -genkey), a lone
	// self-signed CA and explanatory text around the blocks are all accepted.
	pkcs8, err := x509.MarshalPKCS8PrivateKey(p.leaf.key)
	if err != nil {
		t.Fatal(err)
	}
	params := pemText("EC PARAMETERS", []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}, nil)
	for _, body := range []map[string]any{
		{"certificate_pem": p.leaf.pem, "private_key_pem": pemText("PRIVATE KEY", pkcs8, nil)},
		{"certificate_pem": p.leaf.pem, "private_key_pem": params + p.leaf.keyPEM},
		{"certificate_pem": p.root.pem, "private_key_pem": p.root.keyPEM},
		{"certificate_pem": "subject=CN = app.example.com\n" + p.leaf.pem + "\n" + p.intermediate.pem, "private_key_pem": p.leaf.keyPEM},
	} {
		c.ok(201, "POST", "/tls_certificates", body)
	}
	stored := len(c.ok(200, "GET", "/tls_certificates", nil)["tls_certificates"].([]any))

	// Every rejected upload, with its code.
	leafDER := p.leaf.cert.Raw
	keyDER := func(tc *testCert) []byte { b, _ := pem.Decode([]byte(tc.keyPEM)); return b.Bytes }
	bad := func(certPEM, keyPEM string) map[string]any {
		return map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM}
	}
	for _, tt := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"no certificate", map[string]any{"private_key_pem": p.leaf.keyPEM}, "ERR_1922"},
		{"empty certificate", bad("", p.leaf.keyPEM), "ERR_1922"},
		{"blank certificate", bad(" \n\t", p.leaf.keyPEM), "ERR_1922"},
		{"certificate not PEM", bad("not a certificate", p.leaf.keyPEM), "ERR_1900"},
		{"certificate as base64 DER", bad(base64.StdEncoding.EncodeToString(leafDER), p.leaf.keyPEM), "ERR_1900"},
		{"truncated certificate", bad(p.leaf.pem[:len(p.leaf.pem)-30], p.leaf.keyPEM), "ERR_1900"},
		{"damaged block in the chain", bad(p.leaf.pem+"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"+p.intermediate.pem, p.leaf.keyPEM), "ERR_1900"},
		{"certificate DER garbage", bad(pemText("CERTIFICATE", []byte("garbage"), nil), p.leaf.keyPEM), "ERR_1900"},
		{"certificate headers", bad(pemText("CERTIFICATE", leafDER, map[string]string{"Comment": "x"}), p.leaf.keyPEM), "ERR_1910"},
		{"certificate block type", bad(pemText("PUBLIC KEY", leafDER, nil), p.leaf.keyPEM), "ERR_1911"},
		{"trusted certificate type", bad(p.leaf.pem+pemText("TRUSTED CERTIFICATE", p.intermediate.cert.Raw, nil), p.leaf.keyPEM), "ERR_1911"},
		{"no key", map[string]any{"certificate_pem": p.leaf.pem}, "ERR_1901"},
		{"empty key", bad(p.leaf.pem, ""), "ERR_1901"},
		{"legacy encrypted key", bad(p.leaf.pem, pemText("EC PRIVATE KEY", keyDER(p.leaf), map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00112233445566778899AABBCCDDEEFF"})), "ERR_1902"},
		{"PKCS #8 encrypted key", bad(p.leaf.pem, pemText("ENCRYPTED PRIVATE KEY", []byte("opaque"), nil)), "ERR_1902"},
		{"key headers", bad(p.leaf.pem, pemText("EC PRIVATE KEY", keyDER(p.leaf), map[string]string{"Comment": "x"})), "ERR_1910"},
		{"key not PEM", bad(p.leaf.pem, "not a key"), "ERR_1903"},
		{"key block type", bad(p.leaf.pem, pemText("PUBLIC KEY", keyDER(p.leaf), nil)), "ERR_1903"},
		{"OpenSSH key", bad(p.leaf.pem, pemText("OPENSSH PRIVATE KEY", []byte("openssh-key-v1"), nil)), "ERR_1903"},
		{"key DER garbage", bad(p.leaf.pem, pemText("PRIVATE KEY", []byte("garbage"), nil)), "ERR_1903"},
		{"PKCS #1 label on an EC key", bad(p.leaf.pem, pemText("RSA PRIVATE KEY", keyDER(p.leaf), nil)), "ERR_1903"},
		{"two keys", bad(p.leaf.pem, p.leaf.keyPEM+p.rsaLeaf.keyPEM), "ERR_1903"},
		{"key in the certificate field", bad(p.leaf.keyPEM, p.leaf.keyPEM), "ERR_1925"},
		{"both swapped", bad(p.leaf.keyPEM, p.leaf.pem), "ERR_1925"},
		{"certificate in the key field", bad(p.leaf.pem, p.leaf.pem), "ERR_1924"},
		{"key of another certificate", bad(p.leaf.pem, p.rsaLeaf.keyPEM), "ERR_1923"},
		{"key of the issuer", bad(p.leaf.pem+p.intermediate.pem, p.intermediate.keyPEM), "ERR_1923"},
		{"chain out of order", bad(p.leaf.pem+p.root.pem+p.intermediate.pem, p.leaf.keyPEM), "ERR_1926"},
		{"chain missing a link", bad(p.leaf.pem+p.root.pem, p.leaf.keyPEM), "ERR_1926"},
		{"description too long", map[string]any{"certificate_pem": p.leaf.pem, "private_key_pem": p.leaf.keyPEM, "description": strings.Repeat("x", 256)}, "ERR_1914"},
		{"metadata too long", map[string]any{"certificate_pem": p.leaf.pem, "private_key_pem": p.leaf.keyPEM, "metadata": strings.Repeat("x", 4097)}, "ERR_1915"},
		{"issued_at is server-set", map[string]any{"certificate_pem": p.leaf.pem, "private_key_pem": p.leaf.keyPEM, "issued_at": "2025-01-01T00:00:00Z"}, "ERR_214"},
	} {
		t.Run(tt.name, func(t *testing.T) { c.fails(400, tt.code, "POST", "/tls_certificates", tt.body) })
	}
	equal(t, "rejected uploads stored nothing", len(c.ok(200, "GET", "/tls_certificates", nil)["tls_certificates"].([]any)), stored)

	// PATCH: description and metadata only; omitted keeps, "" clears; the PEMs are immutable.
	path := "/tls_certificates/" + id
	got := c.ok(200, "PATCH", path, map[string]any{"metadata": "m2"})
	equal(t, "description kept", got["description"], "d")
	equal(t, "metadata set", got["metadata"], "m2")
	got = c.ok(200, "PATCH", path, map[string]any{"description": ""})
	equal(t, "description cleared", got["description"], nil)
	equal(t, "metadata kept", got["metadata"], "m2")
	equal(t, "empty PATCH", c.ok(200, "PATCH", path, map[string]any{})["metadata"], "m2")
	c.fails(400, "ERR_214", "PATCH", path, map[string]any{"certificate_pem": p.rsaLeaf.pem})
	c.fails(400, "ERR_214", "PATCH", path, map[string]any{"private_key_pem": p.rsaLeaf.keyPEM})
	c.fails(400, "ERR_1914", "PATCH", path, map[string]any{"description": strings.Repeat("x", 256)})
	c.fails(400, "ERR_1915", "PATCH", path, map[string]any{"metadata": strings.Repeat("x", 4097)})
	got = c.ok(200, "GET", path, nil)
	equal(t, "certificate unchanged", got["certificate_pem"], chain)
	equal(t, "metadata unchanged by rejected PATCHes", got["metadata"], "m2")

	// Filters on the derived members.
	for filter, want := range map[string]int{
		`obj.subject_common_name == "app.example.com"`:                                4,
		`obj.subject_common_name == "rsa.example.com"`:                                1,
		`obj.not_after > timestamp("2035-01-01T00:00:00Z")`:                           stored,
		`obj.not_before > timestamp("2025-01-02T03:04:05Z")`:                          0,
		`obj.serial_number == "054ba70d" && obj.metadata == "m2"`:                     1,
		`obj.serial_number in ["03", "04"]`:                                           2,
		`obj.id == "` + id + `"`:                                                      1,
		`obj.created_at < timestamp(time.now).add("1h") && obj.description == ""`:     stored,
		`obj.subject_common_name.startsWith("ed.") || obj.subject_common_name == "x"`: 1,
	} {
		list := c.ok(200, "GET", "/tls_certificates?filter="+urlEscape(filter), nil)
		equal(t, filter, len(list["tls_certificates"].([]any)), want)
	}
	c.fails(400, "ERR_250", "GET", "/tls_certificates?filter="+urlEscape(`obj.issuer_common_name == "x"`), nil)

	// A certificate a reserved domain references cannot be deleted. No endpoint creates
	// domains here, so the referrer is put in the store directly, as the domain family does.
	domainID := ids.New("rd_")
	err = c.srv.Store.Write(context.Background(), func(tx store.Tx) error {
		return tx.Insert(context.Background(), &store.Object{Kind: "reserved_domain", ID: domainID, AccountID: c.srv.AccountID, Doc: []byte(`{}`), Refs: []string{id}})
	})
	if err != nil {
		t.Fatal(err)
	}
	e := c.fails(400, "ERR_1966", "DELETE", path, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], domainID)
	if !strings.Contains(str(e["msg"]), domainID) {
		t.Fatalf("the message does not name the domain: %v", e["msg"])
	}
	err = c.srv.Store.Write(context.Background(), func(tx store.Tx) error {
		return tx.Delete(context.Background(), "reserved_domain", domainID)
	})
	if err != nil {
		t.Fatal(err)
	}
	r = c.req("DELETE", path, nil)
	equal(t, "delete", r.status, 204)
	equal(t, "no body", r.raw, "")
	equal(t, "gone", c.req("GET", path, nil).status, 404)
	c.fails(400, "ERR_227", "GET", "/tls_certificates/ca_x", nil)
}

func TestCertificateAuthorities(t *testing.T) {
	c := newTC(t)
	p := newPKI(t)

	r := c.req("POST", "/certificate_authorities", map[string]any{"ca_pem": p.root.pem, "description": "d", "metadata": "m"})
	equal(t, "status", r.status, 201)
	ca := r.body
	id := str(ca["id"])
	if !ids.Valid(id, "ca_") {
		t.Fatalf("id %q", id)
	}
	equal(t, "uri", ca["uri"], c.srv.URL+"/certificate_authorities/"+id)
	delete(ca, "id")
	delete(ca, "uri")
	delete(ca, "created_at")
	equal(t, "members", ca, map[string]any{
		"description":         "d",
		"metadata":            "m",
		"ca_pem":              p.root.pem,
		"subject_common_name": "Test Root CA",
		"not_before":          "2025-01-02T03:04:05Z",
		"not_after":           "2035-06-07T08:09:10Z",
		"key_usages":          []any{"cert_sign", "crl_sign"},
		"extended_key_usages": []any{},
	})
	inter := c.ok(201, "POST", "/certificate_authorities", map[string]any{"ca_pem": p.intermediate.pem})
	equal(t, "members without description and metadata", keysOf(inter), []string{"ca_pem", "created_at", "extended_key_usages", "id", "key_usages", "not_after", "not_before", "subject_common_name", "uri"})
	equal(t, "intermediate key usages", inter["key_usages"], []any{"cert_sign"})

	for _, tt := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"no ca_pem", map[string]any{}, "ERR_1919"},
		{"empty ca_pem", map[string]any{"ca_pem": ""}, "ERR_1919"},
		{"not PEM", map[string]any{"ca_pem": "hello"}, "ERR_1920"},
		{"truncated", map[string]any{"ca_pem": p.root.pem[:len(p.root.pem)-30]}, "ERR_1920"},
		{"DER garbage", map[string]any{"ca_pem": pemText("CERTIFICATE", []byte("garbage"), nil)}, "ERR_1920"},
		{"too large", map[string]any{"ca_pem": p.root.pem + strings.Repeat("#", 64<<10)}, "ERR_1921"},
		{"headers", map[string]any{"ca_pem": pemText("CERTIFICATE", p.root.cert.Raw, map[string]string{"Comment": "x"})}, "ERR_1910"},
		{"block type", map[string]any{"ca_pem": p.root.keyPEM}, "ERR_1911"},
		{"certificate and key", map[string]any{"ca_pem": p.root.pem + p.root.keyPEM}, "ERR_1911"},
		{"two certificates", map[string]any{"ca_pem": p.intermediate.pem + p.root.pem}, "ERR_1912"},
		{"not a CA", map[string]any{"ca_pem": p.leaf.pem}, "ERR_1913"},
		{"description too long", map[string]any{"ca_pem": p.root.pem, "description": strings.Repeat("x", 256)}, "ERR_1916"},
		{"metadata too long", map[string]any{"ca_pem": p.root.pem, "metadata": strings.Repeat("x", 4097)}, "ERR_1917"},
	} {
		t.Run(tt.name, func(t *testing.T) { c.fails(400, tt.code, "POST", "/certificate_authorities", tt.body) })
	}
	equal(t, "rejected uploads stored nothing", len(c.ok(200, "GET", "/certificate_authorities", nil)["certificate_authorities"].([]any)), 2)

	path := "/certificate_authorities/" + id
	got := c.ok(200, "PATCH", path, map[string]any{"description": "d2"})
	equal(t, "description set", got["description"], "d2")
	equal(t, "metadata kept", got["metadata"], "m")
	got = c.ok(200, "PATCH", path, map[string]any{"metadata": ""})
	equal(t, "metadata cleared", got["metadata"], nil)
	c.fails(400, "ERR_214", "PATCH", path, map[string]any{"ca_pem": p.intermediate.pem})
	c.fails(400, "ERR_1916", "PATCH", path, map[string]any{"description": strings.Repeat("x", 256)})
	equal(t, "ca_pem unchanged", c.ok(200, "GET", path, nil)["ca_pem"], p.root.pem)

	for filter, want := range map[string]int{
		`obj.subject_common_name == "Test Root CA"`:           1,
		`obj.not_before <= timestamp("2025-01-02T03:04:05Z")`: 2,
		`obj.not_after < timestamp(time.now)`:                 0,
		`obj.description == "d2"`:                             1,
	} {
		list := c.ok(200, "GET", "/certificate_authorities?filter="+urlEscape(filter), nil)
		equal(t, filter, len(list["certificate_authorities"].([]any)), want)
	}
	c.fails(400, "ERR_250", "GET", "/certificate_authorities?filter="+urlEscape(`obj.serial_number == "01"`), nil)

	equal(t, "delete", c.req("DELETE", path, nil).status, 204)
	equal(t, "gone", c.req("GET", path, nil).status, 404)
}

func TestCertificateIsolation(t *testing.T) { onEachDatabase(t, testCertificateIsolation) }

func testCertificateIsolation(t *testing.T, c *tc) {
	p := newPKI(t)
	other := c.as(c.srv.NewAccount(t))
	uploads := map[string]map[string]any{
		"/tls_certificates":        {"certificate_pem": p.leaf.pem, "private_key_pem": p.leaf.keyPEM},
		"/certificate_authorities": {"ca_pem": p.root.pem},
	}
	for path, upload := range uploads {
		id := str(c.ok(201, "POST", path, upload)["id"])
		member := strings.TrimPrefix(path, "/")
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if method == "PATCH" {
				body = map[string]any{"description": "stolen"}
			}
			r := other.req(method, path+"/"+id, body)
			equal(t, method+" "+path+" from another account", r.status, 404)
			equal(t, "no error code", r.body["error_code"], nil)
		}
		equal(t, path+" listed to another account", len(other.ok(200, "GET", path, nil)[member].([]any)), 0)
		equal(t, "unchanged", c.ok(200, "GET", path+"/"+id, nil)["description"], nil)
		// The same upload in another account is a separate object.
		other.ok(201, "POST", path, upload)
		equal(t, path+" of the first account", len(c.ok(200, "GET", path, nil)[member].([]any)), 1)
	}
}

// without returns s without the given values.
func without(s []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(v string) bool { return slices.Contains(drop, v) })
}
