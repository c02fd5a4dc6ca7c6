package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/proxyproto"
)

// These tests open visitor streams through the agent plane, as the edge does, to a real
// agent (internal/agentclient) and real apps on loopback.

// visitor is the client address the streams of these tests carry.
var visitor = netip.MustParseAddrPort("203.0.113.9:4567")

// echoApp is a TCP app on loopback that sends back what it reads; with proxied, it first
// reads a PROXY protocol v2 header and sends its source address on a line of its own.
func echoApp(t *testing.T, proxied bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				if proxied {
					h, err := proxyproto.Parse(r)
					if err != nil {
						t.Errorf("PROXY header: %v", err)
						return
					}
					fmt.Fprintf(conn, "%s\n", h.Source)
				}
				_, _ = io.Copy(conn, r)
				_ = conn.(*net.TCPConn).CloseWrite()
			})
		}
	})
	return ln.Addr().String()
}

// streamsTC is a server with an agent whose tunnels are a tcp one on a reserved address to
// an echo app and an http one on app.example.com to an HTTP app.
type streamsTC struct {
	*tc
	agent               *apiservertest.Agent
	credID, addr        string
	tcpTunnel, httpTunn string
}

func newStreamsTC(t *testing.T, forward agentclient.ForwardOptions, proxied bool, labels map[string]string) *streamsTC {
	t.Helper()
	c := newTC(t, apiservertest.NoRateLimit)
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	addr := str(c.ok(201, "POST", "/reserved_addrs", map[string]any{})["addr"])
	credID, token := c.credential()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s from the app", r.Method, r.URL.Path)
	}))
	t.Cleanup(web.Close)
	tunnels := []agentclient.TunnelConfig{
		{Proto: "tcp", Addr: addr, ForwardsTo: echoApp(t, proxied)},
		{Proto: "http", Hostname: "app.example.com", ForwardsTo: web.URL},
	}
	if labels != nil {
		tunnels = append(tunnels, agentclient.TunnelConfig{Proto: "http", Labels: labels, ForwardsTo: web.URL})
	}
	agent := c.srv.StartAgent(t, agentclient.Config{Authtoken: token, Tunnels: tunnels, Forward: forward})
	bound := agent.Tunnels()
	return &streamsTC{tc: c, agent: agent, credID: credID, addr: addr, tcpTunnel: bound[0].ID, httpTunn: bound[1].ID}
}

// open opens a stream to tunnel as the edge would for a visitor at the endpoint hostport.
func (c *streamsTC) open(tunnel, proto, hostport string) net.Conn {
	c.t.Helper()
	st, err := c.srv.Plane.OpenStream(c.t.Context(), tunnel, agentproto.StreamHeader{Proto: proto, ClientAddr: visitor, Hostport: hostport})
	if err != nil {
		c.t.Fatalf("OpenStream: %v", err)
	}
	c.t.Cleanup(func() { _ = st.Close() })
	return st
}

// roundTrip writes msg on conn, ends its writing and reads everything that comes back.
func roundTrip(t *testing.T, conn net.Conn, msg string) string {
	t.Helper()
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = conn.Close() // a yamux stream's Close is a half-close: the answer still comes
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(got)
}

func TestAgentStreamsReachTheApp(t *testing.T) {
	c := newStreamsTC(t, agentclient.ForwardOptions{ProxyProtocol: true}, true, map[string]string{"app": "shop", "env": "prod"})
	plane := c.srv.Plane
	labeled := c.agent.Tunnels()[2].ID

	// What the edge finds: by ID, by endpoint hostport, by labels.
	tcp, ok := plane.Endpoint("tcp", c.addr)
	equal(t, "tcp endpoint", []any{ok, tcp.ID, tcp.Proto, tcp.AccountID, tcp.SessionID}, []any{true, c.tcpTunnel, "tcp", c.srv.AccountID, c.agent.SessionID()})
	web, ok := plane.Endpoint("http", "app.example.com:80")
	equal(t, "http endpoint", []any{ok, web.ID, web.Proto, web.Hostport}, []any{true, c.httpTunn, "http", "app.example.com:443"})
	if _, ok := plane.Endpoint("https", "app.example.com:443"); ok {
		t.Fatal("an http tunnel answers for https")
	}
	byID, ok := plane.Tunnel(labeled)
	equal(t, "labeled tunnel", []any{ok, byID.Labels, byID.Hostport}, []any{true, map[string]string{"app": "shop", "env": "prod"}, ""})
	group := plane.Matching(c.srv.AccountID, map[string]string{"app": "shop"})
	equal(t, "a group of app=shop", len(group), 1)
	equal(t, "its tunnel", group[0].ID, labeled)
	equal(t, "a group of app=other", len(plane.Matching(c.srv.AccountID, map[string]string{"app": "other"})), 0)
	equal(t, "another account's group", len(plane.Matching("acc_other", map[string]string{"app": "shop"})), 0)
	if _, ok := plane.Endpoint("https", "other.example.com:443"); ok {
		t.Fatal("an unbound hostport has a tunnel")
	}

	// tcp: the header reaches the agent (its PROXY header names the visitor), bytes flow
	// both ways.
	got := roundTrip(t, c.open(c.tcpTunnel, "tcp", c.addr), "hello through the tunnel")
	equal(t, "tcp answer", got, visitor.String()+"\nhello through the tunnel")

	// http: a request through the stream is answered by the app.
	st := c.open(c.httpTunn, "http", "app.example.com:443")
	req, _ := http.NewRequest("GET", "http://app.example.com/shop/cart", nil)
	if err := req.Write(st); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(st), req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	equal(t, "http answer", []any{resp.StatusCode, string(body)}, []any{200, "GET /shop/cart from the app"})

	mresp, err := http.Get(c.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(mresp.Body)
	_ = mresp.Body.Close()
	metrics := string(raw)
	for _, want := range []string{`warren_agent_streams_opened_total{outcome="opened"} 2`, "warren_agent_session_streams_max"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestAgentStreamUnreachableApp: a stream to a tunnel whose app is down fails with
// ErrUpstreamUnreachable and the agent's reason, counted as unreachable, and leaves no
// stream open.
func TestAgentStreamUnreachableApp(t *testing.T) {
	c := newTC(t, apiservertest.NoRateLimit)
	addr := str(c.ok(201, "POST", "/reserved_addrs", map[string]any{})["addr"])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	_ = ln.Close()
	_, token := c.credential()
	agent := c.srv.StartAgent(t, agentclient.Config{Authtoken: token, Tunnels: []agentclient.TunnelConfig{{Proto: "tcp", Addr: addr, ForwardsTo: down}}})
	tunnel := agent.Tunnels()[0].ID

	st, err := c.srv.Plane.OpenStream(t.Context(), tunnel, agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: addr})
	var se *agentplane.StreamError
	if st != nil || !errors.As(err, &se) || !errors.Is(err, agentplane.ErrUpstreamUnreachable) || se.TunnelID != tunnel || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("OpenStream to an app that is down: %v, %v", st, err)
	}
	resp, err := http.Get(c.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, want := range []string{`warren_agent_streams_opened_total{outcome="unreachable"} 1`, `warren_agent_streams_opened_total{outcome="opened"} 0`, "warren_agent_streams 0"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestAgentStreamsEndWithTheSession: a stopped session and a deleted credential end the
// session's open streams at once; OpenStream then fails with its typed error, and nothing
// of the session is left running.
func TestAgentStreamsEndWithTheSession(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(c *streamsTC)
	}{
		{"stop", func(c *streamsTC) {
			c.ok(204, "POST", "/tunnel_sessions/"+c.agent.SessionID()+"/stop", map[string]any{})
		}},
		{"credential deleted", func(c *streamsTC) { c.ok(204, "DELETE", "/credentials/"+c.credID, nil) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newStreamsTC(t, agentclient.ForwardOptions{}, false, nil)
			before := goleak.IgnoreCurrent()
			st := c.open(c.tcpTunnel, "tcp", c.addr)
			// The stream is up: the echo app answers.
			if _, err := io.WriteString(st, "ping"); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4)
			if _, err := io.ReadFull(st, buf); err != nil || string(buf) != "ping" {
				t.Fatalf("echo: %q %v", buf, err)
			}

			tt.end(c)
			ended := make(chan error, 1)
			go func() {
				_, err := st.Read(buf)
				ended <- err
			}()
			select {
			case err := <-ended:
				if err == nil {
					t.Fatal("the stream still reads after the session ended")
				}
			case <-time.After(30 * time.Second): // a hang guard, not a measure of speed
				t.Fatal("the stream outlived its session")
			}
			_ = c.agent.Exited(t)

			_, err := c.srv.Plane.OpenStream(context.Background(), c.tcpTunnel, agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: c.addr})
			var se *agentplane.StreamError
			if !errors.As(err, &se) || !errors.Is(err, agentplane.ErrTunnelOffline) || se.TunnelID != c.tcpTunnel {
				t.Fatalf("OpenStream after the session ended: %v", err)
			}
			if _, ok := c.srv.Plane.Tunnel(c.tcpTunnel); ok {
				t.Fatal("the tunnel is still online")
			}
			_ = st.Close()
			goleak.VerifyNone(t, before,
				// The test's HTTP clients and servers keep their idle connections.
				goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"), goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
				goleak.IgnoreAnyFunction("net/http.(*conn).serve"))
		})
	}
}

// TestAgentStreamsConcurrent: 1000 streams at once through one agent to an echo app, each
// with content of its own.
func TestAgentStreamsConcurrent(t *testing.T) {
	c := newStreamsTC(t, agentclient.ForwardOptions{}, false, nil)
	const n = 1000
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			st, err := c.srv.Plane.OpenStream(t.Context(), c.tcpTunnel, agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: c.addr})
			if err != nil {
				t.Errorf("stream %d: %v", i, err)
				return
			}
			defer st.Close()
			msg := bytes.Repeat([]byte(fmt.Sprintf("stream %d;", i)), 200)
			go func() {
				_, _ = st.Write(msg)
				_ = st.Close() // half-close: the echo comes back whole
			}()
			got, err := io.ReadAll(st)
			if err != nil || !bytes.Equal(got, msg) {
				t.Errorf("stream %d: %d bytes back, %v", i, len(got), err)
			}
		})
	}
	wg.Wait()
}
