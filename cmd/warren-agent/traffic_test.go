package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

const agentProcessEnv = "WARREN_TEST_AGENT_PROCESS"

// TestAgentProcessServesTraffic runs warren-agent in a process of its own against a real
// server and edge: a request through the HTTPS edge reaches the agent's app; then the agent
// is killed (SIGKILL) while a request is in flight, and the visitor gets 502 at once, the
// tunnel group then 503, and the server holds no stream of the dead agent.
func TestAgentProcessServesTraffic(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	edge := srv.StartEdge(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	app := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "app answered "+r.URL.Path)
	})}
	appLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Serve(appLn)
	t.Cleanup(func() { close(release); app.Close() })

	certPEM, keyPEM, roots := selfSigned(t, "proc.example.test")
	token := apiCall(t, srv, "POST", "/credentials", map[string]any{"acl": []string{"bind:app=proc"}})["token"].(string)
	cert := apiCall(t, srv, "POST", "/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM})["id"].(string)
	apiCall(t, srv, "POST", "/reserved_domains", map[string]any{"domain": "proc.example.test", "certificate_id": cert})
	group := apiCall(t, srv, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "proc"}})["id"].(string)
	edgeID := apiCall(t, srv, "POST", "/edges/https", map[string]any{"hostports": []string{"proc.example.test:443"}})["id"].(string)
	apiCall(t, srv, "POST", "/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": group}})

	cmd := exec.Command(os.Args[0], "-test.run=^TestAgentProcessHelper$", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), agentProcessEnv+"=1", "WARREN_AGENT_AUTHTOKEN="+token,
		"WARREN_AGENT_SERVER="+srv.URL, "WARREN_AGENT_FORWARDS_TO=http://"+appLn.Addr().String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	visitor := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, edge.HTTPS)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	get := func(path string) (int, string, string) {
		resp, err := visitor.Get("https://proc.example.test" + path)
		if err != nil {
			return 0, err.Error(), ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Warren-Error-Code")
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, body, _ := get("/hello")
		if status == 200 && body == "app answered /hello" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent process never served: last %d %q; its log: %s", status, body, stderr.String())
		}
	}

	type answer struct {
		status int
		code   string
	}
	answered := make(chan answer, 1)
	go func() { status, _, code := get("/slow"); answered <- answer{status, code} }()
	<-entered
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if a := <-answered; a.status != http.StatusBadGateway || a.code != "ERR_8006" {
		t.Fatalf("the visitor of a killed agent got %d %s, want 502 ERR_8006", a.status, a.code)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, _, code := get("/hello")
		metrics := scrapeMetrics(t, srv.URL)
		if status == http.StatusServiceUnavailable && code == "ERR_8005" && strings.Contains(metrics, "warren_agent_streams 0\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the kill: %d %s; streams: %v", status, code, strings.Contains(metrics, "warren_agent_streams 0\n"))
		}
	}
}

// TestAgentProcessHelper is the warren-agent process of TestAgentProcessServesTraffic.
func TestAgentProcessHelper(t *testing.T) {
	if os.Getenv(agentProcessEnv) == "" {
		t.Skip("the agent process of TestAgentProcessServesTraffic")
	}
	os.Exit(run(context.Background(), []string{"--label", "app=proc"}, os.LookupEnv, os.Stdout, os.Stderr))
}

func apiCall(t *testing.T, srv *apiservertest.Server, method, path string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+srv.APIKey)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 || json.Unmarshal(data, &out) != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return out
}

func scrapeMetrics(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// selfSigned makes a self-signed certificate for name and the pool that trusts it.
func selfSigned(t *testing.T, name string) (certPEM, keyPEM string, roots *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})), roots
}
