package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// testCA signs the server certificates of these tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "warren test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns the PEM of a new server certificate for 127.0.0.1 and the host name cn,
// and of its key.
func (ca *testCA) issue(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{cn},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSFlags: --tls-cert and --tls-key go together and must load as a matching pair, or the
// command exits 2 before creating anything, saying why without quoting the key.
func TestTLSFlags(t *testing.T) {
	ca := newTestCA(t)
	files := t.TempDir()
	path := func(name string) string { return filepath.Join(files, name) }
	certPEM, keyPEM := ca.issue(t, "one")
	_, otherKeyPEM := ca.issue(t, "two")
	writeFile(t, path("cert.pem"), certPEM)
	writeFile(t, path("key.pem"), keyPEM)
	writeFile(t, path("other-key.pem"), otherKeyPEM)
	writeFile(t, path("garbage.pem"), []byte("not a PEM file"))

	for _, tt := range []struct {
		name   string
		args   []string
		env    map[string]string
		stderr string
	}{
		{name: "cert without key", args: []string{"--tls-cert", path("cert.pem")}, stderr: "--tls-cert is set without --tls-key; give both or neither"},
		{name: "key without cert", env: map[string]string{"WARREN_TLS_KEY": path("key.pem")}, stderr: "--tls-key is set without --tls-cert; give both or neither"},
		{name: "missing cert", args: []string{"--tls-cert", path("missing.pem"), "--tls-key", path("key.pem")}, stderr: "cannot load the TLS key pair " + path("missing.pem") + ", " + path("key.pem") + ": open " + path("missing.pem") + ": no such file or directory"},
		{name: "key of another cert", args: []string{"--tls-cert", path("cert.pem"), "--tls-key", path("other-key.pem")}, stderr: "tls: private key does not match public key"},
		{name: "cert not PEM", env: map[string]string{"WARREN_TLS_CERT": path("garbage.pem"), "WARREN_TLS_KEY": path("key.pem")}, stderr: "tls: failed to find any PEM data in certificate input"},
		{name: "key not PEM", args: []string{"--tls-cert", path("cert.pem"), "--tls-key", path("garbage.pem")}, stderr: "tls: failed to find any PEM data in key input"},
		// Swapped files: the key file holds a certificate.
		{name: "files swapped", args: []string{"--tls-cert", path("key.pem"), "--tls-key", path("cert.pem")}, stderr: "cannot load the TLS key pair"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			env := map[string]string{"WARREN_DATABASE": filepath.Join(dir, "w.db"), "WARREN_LISTEN": "127.0.0.1:0"}
			maps.Copy(env, tt.env)
			var stdout, stderr apiservertest.LockedBuffer
			if code := run(t.Context(), tt.args, envOf(env), &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.stderr)
			}
			for _, secret := range [][]byte{keyPEM, otherKeyPEM} {
				body := strings.Split(string(secret), "\n")[1] // a line of the key's base64
				if strings.Contains(stderr.String(), body) {
					t.Error("the private key reached the output")
				}
			}
			emptyDir(t, dir)
		})
	}
}

// getOverTLS makes one request over a fresh TLS connection (so each sees the certificate served at
// that moment) and returns the certificate's common name.
func getOverTLS(t *testing.T, pool *x509.CertPool, url string) string {
	t.Helper()
	client := &http.Client{Timeout: guard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("GET %s: connection state %+v, want TLS 1.2 or later", url, resp.TLS)
	}
	return resp.TLS.PeerCertificates[0].Subject.CommonName
}

// waitForLog waits until the output holds n log lines with message msg and returns the last.
func waitForLog(t *testing.T, out *apiservertest.LockedBuffer, msg string, n int) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(guard); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var found []map[string]any
		for _, l := range logLines(t, out.String()) {
			if l["msg"] == msg {
				found = append(found, l)
			}
		}
		if len(found) >= n {
			return found[n-1]
		}
	}
	t.Fatalf("no %d %q log lines: %s", n, msg, out.String())
	return nil
}

// TestServeTLSReloadsOnSIGHUP serves HTTPS with one certificate, replaces the files with a
// second one and sends SIGHUP: new connections get the second. A broken replacement is
// refused with an error in the log, and the second stays served.
func TestServeTLSReloadsOnSIGHUP(t *testing.T) {
	ca := newTestCA(t)
	files := t.TempDir()
	certFile, keyFile := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
	cert1, key1 := ca.issue(t, "warren-one")
	writeFile(t, certFile, cert1)
	writeFile(t, keyFile, key1)

	env := map[string]string{"WARREN_DATABASE": filepath.Join(t.TempDir(), "w.db"), "WARREN_TLS_KEY": keyFile}
	addr, stderr, stop := serveInBackground(t, []string{"--listen", "127.0.0.1:0", "--tls-cert", certFile}, env)
	listening := waitForLog(t, stderr, "listening", 1)
	if listening["base_url"] != "https://"+addr || listening["tls"] != true {
		t.Fatalf("listening line %v, want base_url https://%s and tls true", listening, addr)
	}
	if l := waitForLog(t, stderr, "TLS certificate loaded", 1); l["subject"] != "CN=warren-one" || l["not_after"] == nil {
		t.Fatalf("start line %v", l)
	}
	url := "https://" + addr + "/healthz"
	if cn := getOverTLS(t, ca.pool, url); cn != "warren-one" {
		t.Fatalf("served %q, want warren-one", cn)
	}

	// Below TLS 1.2 the handshake fails.
	old := &http.Client{Timeout: guard, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS11}}}
	if resp, err := old.Get(url); err == nil {
		resp.Body.Close()
		t.Fatal("a TLS 1.1 client was served")
	}

	cert2, key2 := ca.issue(t, "warren-two")
	writeFile(t, certFile, cert2)
	writeFile(t, keyFile, key2)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if l := waitForLog(t, stderr, "TLS certificate reloaded", 1); l["subject"] != "CN=warren-two" || l["not_after"] == nil {
		t.Fatalf("reload line %v", l)
	}
	if cn := getOverTLS(t, ca.pool, url); cn != "warren-two" {
		t.Fatalf("after SIGHUP served %q, want warren-two", cn)
	}

	// A certificate whose key is not the one beside it: the reload fails, warren-two stays.
	cert3, _ := ca.issue(t, "warren-three")
	writeFile(t, certFile, cert3)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if l := waitForLog(t, stderr, "TLS certificate reload failed; serving the previous one", 1); l["level"] != "error" || !strings.Contains(l["error"].(string), "private key does not match public key") {
		t.Fatalf("failed reload line %v", l)
	}
	if cn := getOverTLS(t, ca.pool, url); cn != "warren-two" {
		t.Fatalf("after a broken reload served %q, want warren-two", cn)
	}

	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, key := range [][]byte{key1, key2} {
		if strings.Contains(stderr.String(), strings.Split(string(key), "\n")[1]) {
			t.Fatal("a private key reached the log")
		}
	}
}

// TestExpiredCertificateWarns: an expired pair is still served (the operator may be about to
// replace it), with a warning naming it.
func TestExpiredCertificateWarns(t *testing.T) {
	certPEM, keyPEM := newTestCA(t).issue(t, "warren-old")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cert.pem"), certPEM)
	writeFile(t, filepath.Join(dir, "key.pem"), keyPEM)
	cert, err := loadCertificate(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pair := cert.current.Load()
	for _, tt := range []struct {
		now  time.Time
		warn bool
	}{{pair.Leaf.NotAfter.Add(-time.Second), false}, {pair.Leaf.NotAfter.Add(time.Second), true}} {
		core, logs := observer.New(zap.InfoLevel)
		logCertificate(zap.New(core), "TLS certificate loaded", pair, tt.now)
		warned := logs.FilterLevelExact(zap.WarnLevel).FilterMessage("the TLS certificate has expired; clients will refuse it").Len() == 1
		if warned != tt.warn || logs.FilterMessage("TLS certificate loaded").Len() != 1 {
			t.Errorf("at %v: logged %v, want the info line and a warning %v", tt.now, logs.All(), tt.warn)
		}
	}
}
