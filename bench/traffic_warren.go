package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// startWarrenPaths are Warren's two paths, all in this process: the server on SQLite (its
// API and /agent/connect), its edge serving HTTPS on a loopback listener and TCP on
// 127.0.0.1, and an agent (internal/agentclient, protocol v2) with two tunnels to the app. The
// account holds, made through the API: the domain with the uploaded certificate, an HTTPS
// edge on it whose one route, /, goes to a tunnel-group backend of app=shop (the agent's http
// tunnel); and a reserved address with a TCP edge to a tunnel group of app=shop-tcp (its tcp
// tunnel), where each visitor connection is a stream to the agent. The edge is wired as
// warren-apiserver wires it (the server's agent plane, its metrics registry), and everything
// logs at info level to io.Discard, as the binaries would write it (an access line per request).
func startWarrenPaths(ctx context.Context, e *env, app *trafficApp, certPEM, keyPEM []byte) (https, tcp *trafficPath, err error) {
	db, err := e.openStore(ctx, onSQLite)
	if err != nil {
		return nil, nil, err
	}
	port, err := freePort()
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	logger := zaplog.New(zap.NewAtomicLevelAt(zap.InfoLevel), io.Discard)
	w, err := e.startWarren(ctx, db, noRateLimit, func(o *apiserver.Options) {
		o.Logger, o.AddrPool.MinPort, o.AddrPool.MaxPort = logger, port, port
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	var closers []func()
	stop := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, w.Close)
	fail := func(err error) (*trafficPath, *trafficPath, error) { stop(); return nil, nil, err }

	token, tcpAddr, err := configureShop(ctx, w, certPEM, keyPEM)
	if err != nil {
		return fail(err)
	}
	httpsAddr, stopEdge, err := serveEdge(ctx, w, logger, "127.0.0.1")
	if err != nil {
		return fail(err)
	}
	closers = append(closers, stopEdge)
	stopAgent, err := startAgent(ctx, w, token, app, logger)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, stopAgent)

	https = httpsPath("Warren, HTTPS edge", httpsAddr, certPEM, stop)
	tcp = tcpPath("Warren, TCP edge", "127.0.0.1", tcpAddr)
	// The snapshot and the tunnels are in force at once; wait for the first answers all the
	// same rather than measure a warm-up.
	if err := waitAnswering(ctx, https, tcp); err != nil {
		return fail(err)
	}
	return https, tcp, nil
}

// serveEdge starts an edge of w's replica as warren-apiserver wires it (the server's agent
// plane, its metrics registry): HTTPS on a loopback listener whose address it returns, TCP
// on the reserved addresses' ports of tcpHost.
func serveEdge(ctx context.Context, w *warren, logger *zap.Logger, tcpHost string) (httpsAddr string, stop func(), err error) {
	ed, err := edge.New(ctx, edge.Options{Store: w.Store, Tunnels: w.Server.EdgeTunnels(), Registerer: w.Server.MetricsRegisterer(), Log: logger.Named("edge")})
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ed.Close()
		return "", nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	go ed.Run(runCtx)
	go func() { _ = ed.ServeHTTPS(l) }()
	ed.ServeTCP(tcpHost)
	return l.Addr().String(), func() { cancel(); l.Close(); _ = ed.Close() }, nil
}

// startAgent runs an agent (internal/agentclient, protocol v2) connected to w with token,
// its two tunnels to the app: http for app=shop, tcp for app=shop-tcp; it returns once the
// agent is ready.
func startAgent(ctx context.Context, w *warren, token string, app *trafficApp, logger *zap.Logger) (stop func(), err error) {
	agent, err := agentclient.New(agentclient.Config{
		ServerURL: w.URL, Authtoken: token, Logger: logger.Named("agent"),
		Tunnels: []agentclient.TunnelConfig{
			{Proto: "http", Labels: map[string]string{"app": "shop"}, ForwardsTo: "http://" + app.addr},
			{Proto: "tcp", Labels: map[string]string{"app": "shop-tcp"}, ForwardsTo: app.addr},
		},
	})
	if err != nil {
		return nil, err
	}
	agentCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = agent.Run(agentCtx); close(done) }()
	stop = func() { cancel(); <-done }
	waitCtx, cancelWait := context.WithTimeout(ctx, 15*time.Second)
	defer cancelWait()
	if _, err := agent.Wait(waitCtx, func(s agentclient.State) bool { return s.Ready }); err != nil {
		stop()
		return nil, fmt.Errorf("the agent: %w", err)
	}
	return stop, nil
}

// freePort is a loopback port free now for the reserved address, below the ephemeral range
// where this machine's listeners on port 0 and outgoing connections take theirs: the edge
// listens on it only once the address is made, and a port of the server's default range,
// or one taken meanwhile, would be left closed or answered by another program.
func freePort() (int, error) {
	const lowest, count = 20000, 12000
	start := rand.IntN(count)
	for i := range count {
		port := lowest + (start+i)%count
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port from %d to %d", lowest, lowest+count-1)
}

// httpsPath is the path of the HTTPS edge listening at addr, on the domain whose certificate
// is certPEM.
func httpsPath(name, addr string, certPEM []byte, close func()) *trafficPath {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return &trafficPath{name: name, url: "https://" + trafficDomain, addr: addr,
		tls: &tls.Config{RootCAs: pool}, memory: heapAndStacks, inProcess: true, close: close}
}

// tcpPath is the path of the TCP edge whose listener for the reserved address is on host:
// clients speak plain HTTP through it.
func tcpPath(name, host, reservedAddr string) *trafficPath {
	_, port, _ := net.SplitHostPort(reservedAddr)
	addr := net.JoinHostPort(host, port)
	return &trafficPath{name: name, url: "http://" + addr, addr: addr, memory: heapAndStacks, inProcess: true, close: func() {}}
}

// waitAnswering waits until every path answers GET /.
func waitAnswering(ctx context.Context, paths ...*trafficPath) error {
	for _, p := range paths {
		if err := waitFor(ctx, func() bool { return p.answering(ctx) }, nil); err != nil {
			return fmt.Errorf("%s at %s: %w", p.name, p.addr, err)
		}
	}
	return nil
}

// configureShop makes what Warren's paths serve through the API, as a user would: the
// certificate, the reserved domain, a tunnel-group backend (app=shop), the HTTPS edge and its
// route; a reserved address with a TCP edge to another group (app=shop-tcp); and a tunnel
// credential. It returns the credential's token and the reserved address.
func configureShop(ctx context.Context, w *warren, certPEM, keyPEM []byte) (token, tcpAddr string, err error) {
	c := newHTTPClient(1)
	defer c.CloseIdleConnections()
	// create posts body to path and returns the answer's member name; after an error it
	// does nothing, and configureShop returns that error.
	create := func(name, path string, body any) string {
		if err != nil {
			return ""
		}
		in, _ := json.Marshal(body)
		var out []byte
		if out, err = call(ctx, c, http.MethodPost, w.URL+path, w.Token, string(in), http.StatusCreated); err != nil {
			return ""
		}
		obj := map[string]any{}
		if err = json.Unmarshal(out, &obj); err != nil {
			return ""
		}
		v, _ := obj[name].(string)
		if v == "" {
			err = fmt.Errorf("POST %s: no %s in %.300s", path, name, out)
		}
		return v
	}
	cert := create("id", "/tls_certificates", map[string]any{"certificate_pem": string(certPEM), "private_key_pem": string(keyPEM)})
	create("id", "/reserved_domains", map[string]any{"domain": trafficDomain, "certificate_id": cert})
	group := create("id", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "shop"}})
	edgeID := create("id", "/edges/https", map[string]any{"hostports": []string{trafficDomain + ":443"}})
	create("id", "/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": group}})
	tcpGroup := create("id", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "shop-tcp"}})
	tcpAddr = create("addr", "/reserved_addrs", map[string]any{})
	create("id", "/edges/tcp", map[string]any{"hostports": []string{tcpAddr}, "backend": map[string]any{"backend_id": tcpGroup}})
	token = create("token", "/credentials", map[string]any{"acl": []string{}})
	return token, tcpAddr, err
}
