package edge_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// TestTLSEdgePassthrough: with terminate_at upstream the edge forwards the TLS stream
// whole: the upstream terminates with its own certificate, which the client verifies.
func TestTLSEdgePassthrough(t *testing.T) {
	e := newEnv(t)
	upstreamCA := newCA(t, "upstream CA")
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{upstreamCA.keyPair(t, "pass.example.test", false)}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "from the upstream's own TLS") }))
	e.labelled("tls", map[string]string{"app": "pass"}, l.Addr().String())
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "pass"}})
	e.create("/reserved_domains", map[string]any{"domain": "pass.example.test"})
	e.create("/edges/tls", map[string]any{"hostports": []string{"pass.example.test:443"},
		"backend": map[string]any{"backend_id": group}, "tls_termination": map[string]any{"terminate_at": "upstream"}})
	c := e.client()
	c.Transport.(*http.Transport).TLSClientConfig.RootCAs = upstreamCA.pool()
	if status, body, _ := e.get(c, "https://pass.example.test/"); status != 200 || body != "from the upstream's own TLS" {
		t.Fatalf("passthrough: %d %q", status, body)
	}
}

// TestTLSEdgeTerminated: the edge terminates TLS with the domain's certificate and the
// plaintext stream reaches the backend.
func TestTLSEdgeTerminated(t *testing.T) {
	e := newEnv(t)
	e.labelled("tls", map[string]string{"app": "echo"}, echo(t, "echo"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "echo"}})
	e.domain("term.example.test")
	e.create("/edges/tls", map[string]any{"hostports": []string{"term.example.test:443"}, "backend": map[string]any{"backend_id": group}})
	c, err := e.tlsDial("term.example.test", e.ca.pool())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, c, "ping", "echo:ping")
}

// TestTCPEdge: a TCP edge on a reserved address echoes through its backend; an
// ip_restriction that denies the visitor closes the connection.
func TestTCPEdge(t *testing.T) {
	e := newEnv(t)
	e.labelled("tcp", map[string]string{"app": "tcp"}, echo(t, "tcp"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "tcp"}})
	addr, port := e.reserveAddr()
	edgeID := e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})
	roundTrip(t, e.dialTCP(port), "hello", "tcp:hello")

	e.api("PUT", "/edges/tcp/"+edgeID+"/ip_restriction", map[string]any{"ip_policy_ids": []string{e.ipPolicy("127.0.0.1/32", "deny")}})
	c := e.dialTCP(port)
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("a denied visitor read %d bytes: %v", n, err)
	}
}

// TestTCPFailoverPastAnAppDown: a TCP edge passes over a tunnel whose agent cannot reach
// its app: through a failover, and within a tunnel group, every connection reaches the
// live app; with no other tunnel the visitor's connection is closed.
func TestTCPFailoverPastAnAppDown(t *testing.T) {
	e := newEnv(t)
	e.labelled("tcp", map[string]string{"app": "tcp", "state": "down"}, closedAddr(t))
	e.labelled("tcp", map[string]string{"app": "tcp", "state": "live"}, echo(t, "live"))
	down := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"state": "down"}})
	live := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"state": "live"}})
	both := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "tcp"}})
	failover := e.create("/backends/failover", map[string]any{"backends": []string{down, live}})
	for _, backend := range []string{failover, both} {
		addr, port := e.reserveAddr()
		e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": backend}})
		// The group starts at a random tunnel: ten connections all start at the down one
		// with a probability of 1/1024.
		for range 10 {
			roundTrip(t, e.dialTCP(port), "hello", "live:hello")
		}
	}

	addr, port := e.reserveAddr()
	e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": down}})
	c := e.dialTCP(port)
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("a visitor of a tunnel whose app is down read %d bytes: %v", n, err)
	}
}

// TestAgentEndpoints: agent endpoints of each proto are served where no edge is.
func TestAgentEndpoints(t *testing.T) {
	e := newEnv(t)
	e.create("/reserved_domains", map[string]any{"domain": "ep.example.test"})
	e.agent(agentclient.TunnelConfig{Proto: "http", Hostname: "ep.example.test", ForwardsTo: "http://" + app(t, "plain")})
	req, _ := http.NewRequest("GET", "http://"+e.http.Addr().String()+"/x", nil)
	req.Host = "ep.example.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body[:len("plain GET /x xff=127.0.0.1 proto=http")]) != "plain GET /x xff=127.0.0.1 proto=http" {
		t.Fatalf("http endpoint: %d %q", resp.StatusCode, body)
	}

	e.domain("eps.example.test")
	e.agent(agentclient.TunnelConfig{Proto: "https", Hostname: "eps.example.test", ForwardsTo: "http://" + app(t, "secure")})
	if status, body, _ := e.get(e.client(), "https://eps.example.test/y"); status != 200 || body[:len("secure GET /y")] != "secure GET /y" {
		t.Fatalf("https endpoint: %d %q", status, body)
	}

	upstreamCA := newCA(t, "agent's upstream")
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{upstreamCA.keyPair(t, "ept.example.test", false)}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	e.create("/reserved_domains", map[string]any{"domain": "ept.example.test"})
	e.agent(agentclient.TunnelConfig{Proto: "tls", Hostname: "ept.example.test", ForwardsTo: l.Addr().String()})
	c, err := e.tlsDial("ept.example.test", upstreamCA.pool())
	if err != nil {
		t.Fatalf("tls endpoint (passed through to the agent's upstream): %v", err)
	}
	roundTrip(t, c, "tls bytes", "tls bytes")

	addr, port := e.reserveAddr()
	e.agent(agentclient.TunnelConfig{Proto: "tcp", Addr: addr, ForwardsTo: echo(t, "ep")})
	roundTrip(t, e.dialTCP(port), "tcp bytes", "ep:tcp bytes")
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// TestCloseEndsStreams: closing the edge ends the TCP streams it carries (the visitor sees
// the connection closed) instead of waiting for them.
func TestCloseEndsStreams(t *testing.T) {
	e := newEnv(t)
	e.labelled("tcp", map[string]string{"app": "long"}, echo(t, "long"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "long"}})
	addr, port := e.reserveAddr()
	e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})
	c := e.dialTCP(port)
	roundTrip(t, c, "x", "long:x")
	closed := make(chan error, 1)
	go func() { closed <- e.edge.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // far beyond a Close; bounds a hung test
		t.Fatal("Close waits for the open stream")
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
		t.Fatalf("after Close: %v", err)
	}
}
