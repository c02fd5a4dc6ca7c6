package edge_test

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
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// env is a real API server, an edge on its store with HTTPS, HTTP and TCP listeners on
// loopback, and the server's agent plane as the edge's tunnels: real agents
// (internal/agentclient, in-process) carry the streams to apps on loopback.
type env struct {
	t        *testing.T
	srv      *apiservertest.Server
	edge     *edge.Edge
	https    net.Listener
	http     net.Listener
	ca       *testCA // signs the reserved domains' certificates
	logs     *observer.ObservedLogs
	registry *prometheus.Registry
}

type envOption func(*edge.Options)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	srv := apiservertest.Start(t, apiservertest.NoRateLimit, belowEphemeralPorts)
	return newEnvOn(t, srv, opts...)
}

// belowEphemeralPorts reserves TCP addresses on ports below Linux's ephemeral range, which
// the tests' own loopback listeners (port 0) take from: the edge listens on them.
func belowEphemeralPorts(o *apiserver.Options) {
	o.AddrPool = apiserver.AddrPool{MinPort: 20000, MaxPort: 32000}
}

// newEnvOn starts an edge on the store of srv, its tunnels those of srv's agents.
func newEnvOn(t *testing.T, srv *apiservertest.Server, opts ...envOption) *env {
	t.Helper()
	return newEnvOnStore(t, srv, srv.Store, srv.EdgeTunnels(), opts...)
}

// newEnvOnStore starts an edge on st, a store of srv's database (another replica's), with
// tunnels as that replica's agent plane.
func newEnvOnStore(t *testing.T, srv *apiservertest.Server, st store.Store, tunnels edge.Tunnels, opts ...envOption) *env {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	e := &env{t: t, srv: srv, ca: newCA(t, "edge test CA"), logs: logs, registry: prometheus.NewRegistry()}
	o := edge.Options{Store: st, Tunnels: tunnels, Log: zap.New(core), Registerer: e.registry, PollInterval: 50 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	ed, err := edge.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	e.edge = ed
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e.https, e.http = listen(t), listen(t)
	wg.Go(func() { ed.Run(ctx) })
	wg.Go(func() { _ = ed.ServeHTTPS(e.https) })
	wg.Go(func() { _ = ed.ServePlainHTTP(e.http) })
	ed.ServeTCP("127.0.0.1")
	t.Cleanup(func() {
		cancel()
		e.https.Close()
		e.http.Close()
		ed.Close()
		wg.Wait()
	})
	return e
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// api calls the API and decodes its answer; it fails the test on a status of 300 or more.
func (e *env) api(method, path string, body any) map[string]any {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.srv.APIKey)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		e.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out
}

func (e *env) create(path string, body any) string {
	e.t.Helper()
	return e.api("POST", path, body)["id"].(string)
}

// domain reserves name with a certificate for it uploaded (signed by e.ca).
func (e *env) domain(name string) {
	e.t.Helper()
	certPEM, keyPEM := e.ca.leaf(e.t, name, false)
	cert := e.create("/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM})
	e.create("/reserved_domains", map[string]any{"domain": name, "certificate_id": cert})
}

// httpsEdge creates an HTTPS edge on host (reserved first) with one route to backend
// (modules: extra members of the route) and returns the edge's ID and the route's.
func (e *env) httpsEdge(host, backendID string, route map[string]any) (edgeID, routeID string) {
	e.t.Helper()
	e.domain(host)
	edgeID = e.create("/edges/https", map[string]any{"hostports": []string{host + ":443"}})
	body := map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": backendID}}
	for k, v := range route {
		body[k] = v
	}
	return edgeID, e.create("/edges/https/"+edgeID+"/routes", body)
}

// client is an HTTPS client that reaches every name on the edge's HTTPS listener and
// trusts e.ca; a fresh connection per request, so that each sees the snapshot in force.
func (e *env) client(certs ...tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(e.ca.cert)
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, e.https.Addr().String())
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs},
	}}
}

// get sends GET url through the edge's HTTPS listener and returns status, body and headers.
func (e *env) get(c *http.Client, url string, hdr ...string) (int, string, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// expectPage checks an error page: its status and Warren error code.
func (e *env) expectPage(c *http.Client, url string, status int, code string) string {
	e.t.Helper()
	got, body, h := e.get(c, url)
	if got != status || h.Get("Warren-Error-Code") != code || !strings.Contains(body, code) {
		e.t.Fatalf("GET %s: %d %q %q, want %d with %s", url, got, h.Get("Warren-Error-Code"), body, status, code)
	}
	return body
}

// agent connects a real agent with a new credential (one that may bind anything) and
// tunnels, and waits until the server has bound them all.
func (e *env) agent(tunnels ...agentclient.TunnelConfig) *apiservertest.Agent {
	e.t.Helper()
	token := e.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	return e.srv.StartAgent(e.t, agentclient.Config{Authtoken: token, Tunnels: tunnels})
}

// labelled brings a tunnel of proto labelled labels online through a real agent, its
// streams going to forwardsTo ("http://addr" for an http app, "addr" for tcp and tls).
func (e *env) labelled(proto string, labels map[string]string, forwardsTo string) {
	e.t.Helper()
	e.agent(agentclient.TunnelConfig{Proto: proto, Labels: labels, ForwardsTo: forwardsTo})
}

// noAgents is the agent plane of a replica no agent is connected to: it serves no tunnel.
type noAgents struct{}

func (noAgents) OpenStream(context.Context, string, agentproto.StreamHeader) (net.Conn, error) {
	return nil, errors.New("no agent is connected to this replica")
}
func (noAgents) Matching(string, map[string]string) []edge.Tunnel { return nil }
func (noAgents) Endpoint(string, string) (edge.Tunnel, bool)      { return edge.Tunnel{}, false }

// app starts an HTTP app on loopback that answers with its name and what it received.
func app(t *testing.T, name string) string {
	t.Helper()
	l := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("App", name)
		w.Header().Set("Server-Secret", "s3")
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s xff=%s proto=%s host=%s fwdhost=%s add=%s gone=%s body=%s",
			name, r.Method, r.URL.Path, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto"),
			r.Host, r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Added"), r.Header.Get("X-Gone"), body)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// handlerApp serves h on loopback behind a real agent's http tunnel and returns a tunnel
// group backend that reaches it.
func (e *env) handlerApp(h http.Handler) string {
	e.t.Helper()
	l := listen(e.t)
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	e.t.Cleanup(func() { srv.Close() })
	labels := map[string]string{"app": fmt.Sprintf("handler%d", l.Addr().(*net.TCPAddr).Port)}
	e.labelled("http", labels, "http://"+l.Addr().String())
	return e.create("/backends/tunnel_group", map[string]any{"labels": labels})
}

// closedAddr is a loopback address nobody listens on: an app that is down.
func closedAddr(t *testing.T) string {
	t.Helper()
	l := listen(t)
	addr := l.Addr().String()
	l.Close()
	return addr
}

// tunnel brings an http tunnel labelled labels online through a real agent, to a new app
// named name.
func (e *env) tunnel(name string, labels map[string]string) {
	e.t.Helper()
	e.labelled("http", labels, "http://"+app(e.t, name))
}

// testCA issues certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

var serial struct {
	sync.Mutex
	n int64
}

func nextSerial() *big.Int {
	serial.Lock()
	defer serial.Unlock()
	serial.n++
	return big.NewInt(serial.n + time.Now().UnixNano())
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// leaf issues a certificate for name (a client certificate when client), as PEM.
func (ca *testCA) leaf(t *testing.T, name string, client bool) (certPEM, keyPEM string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else if ip, err := netip.ParseAddr(name); err == nil {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

func (ca *testCA) keyPair(t *testing.T, name string, client bool) tls.Certificate {
	t.Helper()
	c, k := ca.leaf(t, name, client)
	pair, err := tls.X509KeyPair([]byte(c), []byte(k))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// echo starts a TCP server on loopback that echoes what it reads, prefixed by name once
// (nothing when name is empty).
func echo(t *testing.T, name string) string {
	t.Helper()
	l := listen(t)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if name != "" {
					_, _ = io.WriteString(c, name+":")
				}
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip writes msg on c and reads back want's length.
func roundTrip(t *testing.T, c net.Conn, msg string, want string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("read %q (%v), want %q", got, err, want)
	}
}

// reserveAddr reserves a TCP address and returns it with the port the edge listens on.
func (e *env) reserveAddr() (addr string, port int) {
	e.t.Helper()
	addr = e.api("POST", "/reserved_addrs", map[string]any{})["addr"].(string)
	_, p, _ := net.SplitHostPort(addr)
	fmt.Sscan(p, &port)
	return addr, port
}

// dialTCP dials the edge's listener of a reserved address's port, which the snapshot in
// force must have opened.
func (e *env) dialTCP(port int) net.Conn {
	e.t.Helper()
	e.edge.Snapshot(e.t.Context())
	a, ok := e.edge.TCPAddr(port)
	if !ok {
		e.t.Fatalf("no listener for port %d", port)
	}
	c, err := net.Dial("tcp", a.String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// tlsDial dials the HTTPS listener with TLS for name, trusting roots.
func (e *env) tlsDial(name string, roots *x509.CertPool) (*tls.Conn, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 20 * time.Second}, "tcp", e.https.Addr().String(), &tls.Config{ServerName: name, RootCAs: roots})
	if err == nil {
		e.t.Cleanup(func() { c.Close() })
	}
	return c, err
}
