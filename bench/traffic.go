package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var trafficSection = section{
	name:  "traffic",
	title: "Traffic: an app behind Warren's edge and an agent, against a TLS reverse proxy, ssh -R and the app direct",
	run:   runTraffic,
}

const (
	trafficDomain = "shop.example.com" // the SNI and Host of the paths that terminate TLS
	appBody       = "hello from the app\n"
)

// runTraffic measures one small app on loopback reached through Warren (an HTTPS edge, a TCP
// edge), a TLS-terminating httputil.ReverseProxy, OpenSSH's ssh -R and direct, in one run:
// requests per second and latency at 1 and 16 connections, one bulk stream and the memory of
// idle connections; then Warren's HTTPS path against issue 17's targets.
func runTraffic(ctx context.Context, e *env) (*result, error) {
	f, err := startFloors(e, "traffic")
	if err != nil {
		return nil, err
	}
	defer f.close()
	app, direct, proxy := f.app, f.direct, f.proxy
	sshPath, err := startSSH(ctx, e, app)
	if err != nil {
		return nil, err
	}
	defer sshPath.close()
	warren, warrenTCP, err := startWarrenPaths(ctx, e, app, f.certPEM, f.keyPEM)
	if err != nil {
		return nil, fmt.Errorf("Warren's paths: %w", err)
	}
	defer warren.close()
	paths := []*trafficPath{direct, warren, warrenTCP, proxy, sshPath}

	m, err := measureTraffic(ctx, e, app, f.caFile, paths)
	if err != nil {
		return nil, err
	}
	res := m.result(direct, proxy)
	res.Intro = fmt.Sprintf("One small app on loopback (plain HTTP: a %d-byte answer at `/`, N MiB at `/bulk`), reached in this run: "+
		"through Warren, the server, its edge and an agent (internal/agentclient, protocol v2: yamux streams over its WebSocket) all in this process, "+
		"by an HTTPS edge on the reserved domain %s with its uploaded certificate (TLS 1.3, ECDSA P-256, chosen by SNI) whose route / goes to a tunnel-group backend, "+
		"and by a TCP edge on a reserved address to another tunnel group (each visitor connection a stream to the agent, the clients speaking HTTP through it); "+
		"through a TLS-terminating `httputil.ReverseProxy` in this process with the same certificate (X-Forwarded headers set, keep-alive to the app: the work of the HTTPS edge minus the tunnel); "+
		"through OpenSSH's `ssh -R` (a throwaway sshd on a loopback port, the forwarded port on the sshd side, ssh dialing the app, the cipher OpenSSH picks by default: %s); "+
		"and direct. Warren, like the binaries, logs at info level (JSON through zap, written to io.Discard), an access line per request. "+
		"Closed-loop Go clients with HTTP/1.1 keep-alive in this process, %s per point for each path, in %d slices that take turns so all paths see the same machine. "+
		"Added latency is over the app direct at the same connections.",
		len(appBody), trafficDomain, sshCipher(), m.dur, m.rounds)
	res.Findings = append(res.Findings,
		"`ssh -R` carries plain TCP (the clients speak HTTP to the forwarded port), as Warren's TCP edge does, while the HTTPS edge also terminates TLS and proxies HTTP: "+
			"against the HTTPS edge the comparison favours ssh.",
		"The paths in this process share its CPU and its garbage collector with the clients, the app and each other's idle state; sshd and ssh run as processes of their own.",
		"Memory per idle connection: the clients run as their own process, so their memory is never counted. For the paths in this process the number is "+
			"the growth of the Go heap and stacks after a collection while the connections are held, less what the app's own connections cost "+
			fmt.Sprintf("(measured on the app direct: %s each, times the app connections the path holds open). ", kib(m.idle[direct]))+
			"For Warren it counts both ends of each stream, the edge's and the agent's, since both run here. "+
			"An HTTPS edge's idle visitor connection holds no stream (the edge keeps a pool of streams to the agent, as the proxy keeps connections to the app), "+
			"so the target's idle tunneled connection is the TCP edge's, which holds a stream and a connection to the app each. "+
			"For ssh it is the growth of the resident memory of sshd's processes and ssh, read from /proc.")
	targets, err := m.targets(ctx, e, warren, warrenTCP, direct, proxy, sshPath)
	if err != nil {
		return nil, err
	}
	res.Tables = append(res.Tables, targets...)
	return res, nil
}

// trafficMeasures are what measureTraffic found on each path.
type trafficMeasures struct {
	paths             []*trafficPath
	conns             []int
	dur               time.Duration
	rounds            int
	loads             map[*trafficPath]map[int]loadResult
	bulkMiB, bulkRuns int
	bulk              map[*trafficPath]float64 // MB/s of one stream, the median of bulkRuns
	idleN             int
	idle              map[*trafficPath]float64 // bytes per idle connection (the app direct: the app's own)
	idleApp           map[*trafficPath]int64   // app connections held open for the idle connections

	app             *trafficApp
	caFile, clients string // what holdIdle needs again for a heap profile
}

// measureTraffic measures every path: loads at 1 and 16 connections interleaved, bulk
// streams in turns, then idle connections path by path; paths[0] must be the app direct.
func measureTraffic(ctx context.Context, e *env, app *trafficApp, caFile string, paths []*trafficPath) (*trafficMeasures, error) {
	m := &trafficMeasures{
		paths: paths, conns: []int{1, 16},
		dur: size(e, 3*time.Second, 300*time.Millisecond), rounds: size(e, 6, 1),
		loads:   map[*trafficPath]map[int]loadResult{},
		bulkMiB: size(e, 256, 8), bulkRuns: size(e, 3, 1), bulk: map[*trafficPath]float64{},
		idleN: size(e, 1000, 100), idle: map[*trafficPath]float64{}, idleApp: map[*trafficPath]int64{},
		app: app, caFile: caFile,
	}
	for _, conns := range m.conns {
		var loads []func(context.Context, int) error
		var clients []*http.Client
		for _, p := range paths {
			c := p.client(conns)
			clients = append(clients, c)
			loads = append(loads, p.request(c))
		}
		rs, err := interleave(ctx, conns, m.dur, m.rounds, loads...)
		if err != nil {
			return nil, err
		}
		for i, p := range paths {
			clients[i].CloseIdleConnections()
			if m.loads[p] == nil {
				m.loads[p] = map[int]loadResult{}
			}
			m.loads[p][conns] = rs[i]
			e.logf("traffic: %s at %d conns: %.0f req/s, p50 %s, p99 %s", p.name, conns, rs[i].RPS, ms(rs[i].P50), ms(rs[i].P99))
		}
	}

	samples := map[*trafficPath][]float64{}
	for range m.bulkRuns {
		for _, p := range paths {
			mbps, err := p.download(ctx, m.bulkMiB)
			if err != nil {
				return nil, fmt.Errorf("%s: bulk: %w", p.name, err)
			}
			samples[p] = append(samples[p], mbps)
		}
	}
	for _, p := range paths {
		slices.Sort(samples[p])
		m.bulk[p] = samples[p][len(samples[p])/2]
		e.logf("traffic: %s: one stream of %d MiB at %.0f MB/s", p.name, m.bulkMiB, m.bulk[p])
	}

	var err error
	if m.clients, err = e.buildProgram(ctx, "idle-clients", idleClients); err != nil {
		return nil, err
	}
	var appPerConn float64
	for i, p := range paths {
		held, err := p.holdIdle(ctx, m.clients, caFile, app, m.idleN, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %d idle connections: %w", p.name, m.idleN, err)
		}
		m.idleApp[p] = held.appConns
		switch {
		case i == 0:
			appPerConn = float64(held.delta) / float64(max(1, held.appConns))
			m.idle[p] = appPerConn
		case p.inProcess:
			m.idle[p] = (float64(held.delta) - appPerConn*float64(held.appConns)) / float64(m.idleN)
		default:
			m.idle[p] = float64(held.delta) / float64(m.idleN)
		}
		e.logf("traffic: %s: %s per idle connection (%d app connections)", p.name, kib(m.idle[p]), held.appConns)
	}
	return m, nil
}

// result tabulates the measures with the ratios to the proxy and the latency added to the
// app direct.
func (m *trafficMeasures) result(direct, proxy *trafficPath) *result {
	reqs := table{
		Caption: fmt.Sprintf("Requests for the app's small answer (GET /, %d bytes):", len(appBody)),
		Header:  []string{"path", "conns", "req/s", "p50", "p99", "added p50", "added p99", "req/s ÷ proxy's"},
	}
	bulk := table{
		Caption: fmt.Sprintf("One stream downloading %d MiB (GET /bulk), the median of %d:", m.bulkMiB, m.bulkRuns),
		Header:  []string{"path", "MB/s", "÷ proxy's"},
	}
	idle := table{
		Caption: fmt.Sprintf("%d idle keep-alive connections, each after one request, held by clients in a process of their own:", m.idleN),
		Header:  []string{"path", "app connections held", "memory per idle connection", "measured as"},
	}
	for _, p := range m.paths {
		for _, conns := range m.conns {
			r, d := m.loads[p][conns], m.loads[direct][conns]
			reqs.Rows = append(reqs.Rows, []string{p.name, fmt.Sprint(conns), fmt.Sprintf("%.0f", r.RPS), ms(r.P50), ms(r.P99),
				ms(r.P50 - d.P50), ms(r.P99 - d.P99), ratio(r.RPS, m.loads[proxy][conns].RPS)})
		}
		bulk.Rows = append(bulk.Rows, []string{p.name, fmt.Sprintf("%.0f", m.bulk[p]), ratio(m.bulk[p], m.bulk[proxy])})
		method := "this process's Go heap and stacks (HeapInuse+StackInuse after GC), less the app's share"
		switch {
		case p == direct:
			method = "this process's Go heap and stacks: the app's own share, left out of the other paths in this process"
		case !p.inProcess:
			method = "resident memory (VmRSS) of sshd's processes and ssh"
		}
		idle.Rows = append(idle.Rows, []string{p.name, fmt.Sprint(m.idleApp[p]), kib(m.idle[p]), method})
	}
	return &result{Tables: []table{reqs, bulk, idle}}
}

// trafficApp is the app behind every path: a small fixed answer at / and N MiB at
// /bulk?mib=N, over plain HTTP on loopback. It counts its open connections, so that a path's
// memory can leave the app's own out.
type trafficApp struct {
	addr string
	open atomic.Int64
	srv  *http.Server
}

// trafficFloors are what both traffic sections set up the same way: the app, the certificate
// of trafficDomain (with its file, for the clients to trust), the TLS reverse proxy in front
// of the app and the app direct.
type trafficFloors struct {
	app             *trafficApp
	certPEM, keyPEM []byte
	caFile          string
	proxy, direct   *trafficPath
}

// startFloors starts the floors of a section; name tells its certificate file apart.
func startFloors(e *env, name string) (*trafficFloors, error) {
	app, err := startApp()
	if err != nil {
		return nil, err
	}
	f := &trafficFloors{app: app, caFile: filepath.Join(e.dir, name+"-ca.pem")}
	f.certPEM, f.keyPEM, err = selfSigned(trafficDomain)
	if err == nil {
		err = os.WriteFile(f.caFile, f.certPEM, 0o644)
	}
	if err == nil {
		f.proxy, err = startProxy(app, f.certPEM, f.keyPEM)
	}
	if err != nil {
		app.close()
		return nil, err
	}
	f.direct = &trafficPath{name: "app direct", url: "http://" + app.addr, addr: app.addr, memory: heapAndStacks, inProcess: true, close: func() {}}
	return f, nil
}

func (f *trafficFloors) close() {
	f.proxy.close()
	f.app.close()
}

func startApp() (*trafficApp, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	chunk := make([]byte, 256<<10)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, appBody)
	})
	mux.HandleFunc("GET /bulk", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("mib"))
		if err != nil || n < 1 {
			http.Error(w, "mib: a number of MiB", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(n<<20))
		for range n << 20 / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	a := &trafficApp{addr: l.Addr().String()}
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			a.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			a.open.Add(-1)
		}
	}}
	go func() { _ = a.srv.Serve(l) }()
	return a, nil
}

func (a *trafficApp) close() { _ = a.srv.Close() }

// trafficPath is one way from a client to the app.
type trafficPath struct {
	name      string
	url       string      // the app's root through the path, without the trailing slash
	addr      string      // where the path's clients connect (the URL's host may be a name)
	tls       *tls.Config // the clients' TLS: the trusted certificate; nil for plain HTTP
	memory    func() (int64, error)
	inProcess bool // memory is this process's: the app's connections are in it too
	close     func()
}

// client keeps up to conns HTTP/1.1 connections to the path open.
func (p *trafficPath) client(conns int) *http.Client {
	c := newHTTPClient(conns)
	t := c.Transport.(*http.Transport)
	t.ForceAttemptHTTP2, t.TLSClientConfig = false, p.tls
	t.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, p.addr)
	}
	return c
}

// request is a load's call: GET / through the path on c, which must answer 200 with the
// app's answer (not another program's on a port the path should have held).
func (p *trafficPath) request(c *http.Client) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error {
		body, err := call(ctx, c, http.MethodGet, p.url+"/", "", "", http.StatusOK)
		if err == nil && string(body) != appBody {
			err = fmt.Errorf("GET / through %s: %q is not the app's answer", p.name, body)
		}
		return err
	}
}

// answering reports whether GET / through the path answers 200 now.
func (p *trafficPath) answering(ctx context.Context) bool {
	c := p.client(1)
	defer c.CloseIdleConnections()
	err := p.request(c)(ctx, 0)
	return err == nil
}

// download reads mib MiB from /bulk on one connection and returns the MB/s.
func (p *trafficPath) download(ctx context.Context, mib int) (float64, error) {
	c := p.client(1)
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/bulk?mib=%d", p.url, mib), nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK || n != int64(mib)<<20 {
		return 0, fmt.Errorf("GET /bulk: %d, %d bytes of %d", resp.StatusCode, n, mib<<20)
	}
	return float64(n) / 1e6 / time.Since(start).Seconds(), nil
}

// idleMeasure is how much a path's memory grew while idle connections were held, and how
// many connections to the app it held open for them.
type idleMeasure struct {
	delta    int64
	appConns int64
}

// holdIdle has the idle-clients program open n keep-alive connections through the path, one
// request each, and measures the path's memory before and while they are held; whileHeld,
// unless nil, runs then too.
func (p *trafficPath) holdIdle(ctx context.Context, clients, caFile string, app *trafficApp, n int, whileHeld func() error) (idleMeasure, error) {
	u, err := url.Parse(p.url)
	if err != nil {
		return idleMeasure{}, err
	}
	if p.tls == nil {
		caFile = "-"
	}
	before, err := p.memory()
	if err != nil {
		return idleMeasure{}, err
	}
	appBefore, goroutines := app.open.Load(), runtime.NumGoroutine()
	cmd := exec.CommandContext(ctx, clients, p.addr, u.Host, caFile, strconv.Itoa(n))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return idleMeasure{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return idleMeasure{}, err
	}
	if err := cmd.Start(); err != nil {
		return idleMeasure{}, err
	}
	defer func() {
		stdin.Close() // the clients close their connections and exit
		_ = cmd.Wait()
		// The next measure starts from the same state: the connections' ends through the
		// path and at the app closed, their goroutines gone.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) &&
			(app.open.Load() > appBefore || runtime.NumGoroutine() > goroutines); {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Wait()
		return idleMeasure{}, fmt.Errorf("idle clients: %q %v: %s", line, err, stderr.String())
	}
	// Let every server-side goroutine go back to waiting for the next request.
	time.Sleep(250 * time.Millisecond)
	after, err := p.memory()
	if err != nil {
		return idleMeasure{}, err
	}
	if whileHeld != nil {
		if err := whileHeld(); err != nil {
			return idleMeasure{}, err
		}
	}
	return idleMeasure{delta: after - before, appConns: app.open.Load() - appBefore}, nil
}

// idleClients is the program that holds the idle connections, in a process of its own so
// that its memory is never counted as a path's: it connects n times to ADDR (TLS with SNI
// HOST when CAFILE is not "-"), sends GET / on each and reads the answer, prints "ready" and
// keeps them open until its standard input closes.
const idleClients = `package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	addr, host, caFile := os.Args[1], os.Args[2], os.Args[3]
	n, err := strconv.Atoi(os.Args[4])
	check(err)
	var cfg *tls.Config
	if caFile != "-" {
		ca, err := os.ReadFile(caFile)
		check(err)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		hostname, _, err := net.SplitHostPort(host)
		if err != nil {
			hostname = host
		}
		cfg = &tls.Config{RootCAs: pool, ServerName: hostname, NextProtos: []string{"http/1.1"}}
	}
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		check(err)
		if cfg != nil {
			c = tls.Client(c, cfg)
		}
		_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		check(err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		check(err)
		_, err = io.Copy(io.Discard, resp.Body)
		check(err)
		if resp.StatusCode != 200 {
			check(fmt.Errorf("GET /: %s", resp.Status))
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// heapAndStacks is what this process's Go heap and goroutine stacks hold after two collections
// (sync.Pool caches last two cycles):
// a connection's buffers are on the heap, its goroutines' stacks beside it.
func heapAndStacks() (int64, error) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse), nil
}

// startProxy is the floor of Warren's edge: an httputil.ReverseProxy behind a TLS listener
// on loopback with the domain's certificate, keeping its connections to the app alive.
func startProxy(app *trafficApp, certPEM, keyPEM []byte) (*trafficPath, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	target := &url.URL{Scheme: "http", Host: app.addr}
	backend := http.DefaultTransport.(*http.Transport).Clone()
	backend.MaxIdleConnsPerHost = 1024 // the default (2) would dial the app anew under 16 connections
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target); r.SetXForwarded() },
		Transport: backend,
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:   proxy,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ErrorLog:  log.New(io.Discard, "", 0),
		// As the edge's: a slowloris client cannot hold the floor's connections open.
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	return &trafficPath{
		name: "TLS reverse proxy", url: "https://" + trafficDomain, addr: l.Addr().String(),
		tls: &tls.Config{RootCAs: pool}, memory: heapAndStacks, inProcess: true,
		close: func() { _ = srv.Close(); backend.CloseIdleConnections() },
	}, nil
}

// selfSigned makes a certificate and key for domain, in PEM.
func selfSigned(domain string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: domain},
		DNSNames:     []string{domain},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}
