package edge_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// TestTunnelGroupSpreads: the requests of a tunnel group reach every tunnel of the group,
// and no tunnel outside it.
func TestTunnelGroupSpreads(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.tunnel(fmt.Sprintf("web%d", i), map[string]string{"app": "web"})
	}
	e.tunnel("api", map[string]string{"app": "api"})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}})
	e.httpsEdge("spread.example.test", group, nil)
	seen := map[string]int{}
	for range 60 {
		_, body, _ := e.get(e.client(), "https://spread.example.test/")
		seen[strings.Fields(body)[0]]++
	}
	if len(seen) != 3 || seen["api"] > 0 {
		t.Fatalf("60 requests went to %v, want web0, web1 and web2", seen)
	}
}

// TestWeightedBackend: traffic follows the weights; a weight of 0 gets none.
func TestWeightedBackend(t *testing.T) {
	e := newEnv(t)
	heavy, light, never := e.fixed("heavy"), e.fixed("light"), e.fixed("never")
	w := e.create("/backends/weighted", map[string]any{"backends": map[string]int{heavy: 9, light: 1, never: 0}})
	e.httpsEdge("weighted.example.test", w, nil)
	seen := map[string]int{}
	for range 100 {
		_, body, _ := e.get(e.client(), "https://weighted.example.test/")
		seen[body]++
	}
	// 100 draws at 9:1: fewer than 70 heavy has a probability below 1e-10.
	if seen["never"] > 0 || seen["heavy"] < 70 || seen["light"] == 0 || seen["heavy"]+seen["light"] != 100 {
		t.Fatalf("weighted 9:1:0 went %v", seen)
	}
}

// TestFailoverBackend: the first backend whose connection works serves: a group with no
// tunnel online and a tunnel whose stream cannot be opened are passed over.
func TestFailoverBackend(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.NoRateLimit, belowEphemeralPorts)
	ending := edge.Tunnel{ID: "tn_ending", AccountID: srv.AccountID, Proto: "http", Labels: map[string]string{"app": "ending"}}
	e := newEnvOn(t, srv, func(o *edge.Options) { o.Tunnels = sessionEnding{o.Tunnels, ending} })
	empty := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "nobody"}})
	broken := e.create("/backends/tunnel_group", map[string]any{"labels": ending.Labels})
	e.tunnel("standby", map[string]string{"app": "standby"})
	standby := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "standby"}})
	f := e.create("/backends/failover", map[string]any{"backends": []string{empty, broken, standby}})
	e.httpsEdge("failover.example.test", f, nil)
	e.expectStandby("failover")
}

// sessionEnding is the server's agent plane plus one tunnel listed online whose streams
// cannot be opened, as when its agent's session ends between the edge's listing and its
// stream: no real agent can be stopped at that moment on purpose. (An agent whose app is
// down is TestFailoverPastAnAppDown.)
type sessionEnding struct {
	edge.Tunnels
	tunnel edge.Tunnel
}

func (s sessionEnding) Matching(account string, labels map[string]string) []edge.Tunnel {
	out := s.Tunnels.Matching(account, labels)
	match := account == s.tunnel.AccountID
	for k, v := range labels {
		match = match && s.tunnel.Labels[k] == v
	}
	if match {
		out = append(out, s.tunnel)
	}
	return out
}

func (s sessionEnding) OpenStream(ctx context.Context, id string, h agentproto.StreamHeader) (net.Conn, error) {
	if id == s.tunnel.ID {
		return nil, errors.New("the tunnel's session ended")
	}
	return s.Tunnels.OpenStream(ctx, id, h)
}

// TestFailoverPastAnAppDown: a real agent whose app is down answers the stream with a
// failed dial, so the failover passes over its tunnel to the next backend, the request's
// body intact; with no backend left the visitor gets 502 ERR_8006.
func TestFailoverPastAnAppDown(t *testing.T) {
	e := newEnv(t)
	e.labelled("http", map[string]string{"app": "down"}, "http://"+closedAddr(t))
	down := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "down"}})
	e.tunnel("standby", map[string]string{"app": "standby"})
	standby := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "standby"}})
	f := e.create("/backends/failover", map[string]any{"backends": []string{down, standby}})
	e.httpsEdge("failover.example.test", f, nil)
	e.expectStandby("failover past an app down")

	e.httpsEdge("down.example.test", down, nil)
	e.expectPage(e.client(), "https://down.example.test/", http.StatusBadGateway, "ERR_8006")
}

// TestStaticBackend: a static backend on loopback is refused by default (502 ERR_8011),
// served when the operator allows loopback, and reached over TLS when tls is set.
func TestStaticBackend(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "static plain") }))
	defer upstream.Close()
	tlsUpstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "static tls") }))
	tlsUpstream.TLS = &tls.Config{}
	upstreamCA := newCA(t, "upstream CA")
	tlsUpstream.TLS.Certificates = []tls.Certificate{upstreamCA.keyPair(t, "127.0.0.1", false)}
	tlsUpstream.StartTLS()
	defer tlsUpstream.Close()

	refusing := newEnv(t)
	b := refusing.create("/backends/static", map[string]any{"address": upstream.Listener.Addr().String()})
	refusing.httpsEdge("static.example.test", b, nil)
	refusing.expectPage(refusing.client(), "https://static.example.test/", http.StatusBadGateway, "ERR_8011")

	pool := upstreamCA.pool()
	allowing := newEnv(t, func(o *edge.Options) {
		o.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		o.StaticRootCAs = pool
	})
	b = allowing.create("/backends/static", map[string]any{"address": upstream.Listener.Addr().String()})
	allowing.httpsEdge("static.example.test", b, nil)
	if status, body, _ := allowing.get(allowing.client(), "https://static.example.test/"); status != 200 || body != "static plain" {
		t.Fatalf("allowed static backend: %d %q", status, body)
	}
	b = allowing.create("/backends/static", map[string]any{"address": tlsUpstream.Listener.Addr().String(), "tls": map[string]any{"enabled": true}})
	allowing.httpsEdge("statictls.example.test", b, nil)
	if status, body, _ := allowing.get(allowing.client(), "https://statictls.example.test/"); status != 200 || body != "static tls" {
		t.Fatalf("static backend over TLS: %d %q", status, body)
	}
}

// expectStandby sends POST /up with a body through failover.example.test and checks that the
// app named standby answered it, the body intact.
func (e *env) expectStandby(what string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", "https://failover.example.test/up", strings.NewReader("payload"))
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "standby POST /up") || !strings.HasSuffix(string(body), "body=payload") {
		e.t.Fatalf("%s: %d %q", what, resp.StatusCode, body)
	}
}
