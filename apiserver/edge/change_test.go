package edge_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// TestChangeWhileTrafficFlows: requests keep flowing while the route's backend changes;
// every request is answered by the old or the new backend, and once the PATCH has returned
// every new connection gets the new one.
func TestChangeWhileTrafficFlows(t *testing.T) {
	e := newEnv(t)
	before, after := e.fixed("before"), e.fixed("after")
	edgeID, routeID := e.httpsEdge("live.example.test", before, nil)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var served, odd atomic.Int64
	c := e.client()
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				resp, err := c.Get("https://live.example.test/")
				if err != nil {
					odd.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "before" && string(b) != "after" {
					odd.Add(1)
				}
				served.Add(1)
			}
		})
	}
	for served.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	e.api("PATCH", "/edges/https/"+edgeID+"/routes/"+routeID, map[string]any{"backend": map[string]any{"backend_id": after}})
	for range 10 {
		if _, body, _ := e.get(c, "https://live.example.test/"); body != "after" {
			t.Fatalf("after the PATCH returned: %q", body)
		}
	}
	stop()
	wg.Wait()
	if odd.Load() > 0 {
		t.Fatalf("%d requests failed or got another answer while the configuration changed", odd.Load())
	}
}

// TestOtherReplicaSeesChange: two edges on one PostgreSQL database, each on its own store
// (as two server processes): a change made through one process's API reaches the other
// edge by its poll of the routing revision.
func TestOtherReplicaSeesChange(t *testing.T) {
	srv, replicaStore := onPostgres(t)
	local := newEnvOn(t, srv)
	remote := newEnvOnStore(t, srv, replicaStore(), noAgents{}) // no agent connects to the other replica
	remote.ca = local.ca
	before, after := local.fixed("before"), local.fixed("after")
	edgeID, routeID := local.httpsEdge("replica.example.test", before, nil)
	// Until its poll, the other replica knows neither the name nor its certificate: it
	// closes the connection.
	waitFor(t, "the other replica serves the edge", func() bool { return remote.tryGet("https://replica.example.test/") == "before" })
	local.api("PATCH", "/edges/https/"+edgeID+"/routes/"+routeID, map[string]any{"backend": map[string]any{"backend_id": after}})
	if _, body, _ := local.get(local.client(), "https://replica.example.test/"); body != "after" {
		t.Fatalf("the replica that made the change: %q", body)
	}
	waitFor(t, "the other replica sees the change", func() bool { return remote.tryGet("https://replica.example.test/") == "after" })
}

// onPostgres starts an API server on a new PostgreSQL database, and returns it with a
// function that opens another store on that database, as another replica's process does
// (closed when the test ends).
func onPostgres(t *testing.T) (*apiservertest.Server, func() store.Store) {
	t.Helper()
	dsn := pgcluster.Database(t)
	srv := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, apiservertest.NoRateLimit, belowEphemeralPorts)
	keys := srv.Keys(t)
	return srv, func() store.Store {
		t.Helper()
		other, err := postgres.Open(t.Context(), dsn, sqlstore.WithKeys(keys))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		return other
	}
}

// waitFor polls cond until it holds; a minute bounds a hung test (no speed is asserted).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting until %s: gave up", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowloris: a visitor that stalls is cut on every listener: before its ClientHello,
// in the middle of its request headers (HTTPS and HTTP), and idle on a TCP edge.
func TestSlowloris(t *testing.T) {
	short := 200 * time.Millisecond
	e := newEnv(t, func(o *edge.Options) {
		o.HandshakeTimeout, o.ReadHeaderTimeout, o.IdleTimeout = short, short, short
	})
	e.edgeWith("slow.example.test", nil, e.fixed("fast"), nil)
	e.labelled("tcp", map[string]string{"app": "idle"}, echo(t, "idle"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "idle"}})
	addr, port := e.reserveAddr()
	e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})

	closed := func(what string, c net.Conn) {
		t.Helper()
		// The client waits far longer than the edge's timeouts: only the edge closing the
		// connection ends this read before the deadline.
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := io.Copy(io.Discard, c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: the edge kept the stalled connection open", what)
		}
	}
	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	closed("HTTPS, no ClientHello", dial(e.https.Addr().String()))

	half, err := e.tlsDial("slow.example.test", e.ca.pool())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(half, "GET / HTTP/1.1\r\nHost: slow.example.test\r\nX-Slow: ")
	closed("HTTPS, half the headers", half)

	plain := dial(e.http.Addr().String())
	io.WriteString(plain, "GET / HTTP/1.1\r\nHost: ep.example.test\r\nX-Slow: ")
	closed("HTTP, half the headers", plain)

	tcp := e.dialTCP(port)
	roundTrip(t, tcp, "x", "idle:x")
	closed("TCP, idle", tcp)

	// The edge still serves the patient.
	if status, body, _ := e.get(e.client(), "https://slow.example.test/"); status != 200 || body != "fast" {
		t.Fatalf("after the slow visitors: %d %q", status, body)
	}
}

// TestWebSocketUpgrade: an upgrade passes through a route to the app and both ways after.
func TestWebSocketUpgrade(t *testing.T) {
	e := newEnv(t)
	l := listen(t)
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		io.Copy(c, brw) // echo
	}))
	t.Cleanup(func() { l.Close() })
	e.labelled("http", map[string]string{"app": "ws"}, "http://"+l.Addr().String())
	e.httpsEdge("ws.example.test", e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "ws"}}), nil)
	c, err := tls.Dial("tcp", e.https.Addr().String(), &tls.Config{ServerName: "ws.example.test", RootCAs: e.ca.pool(), NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /chat HTTP/1.1\r\nHost: ws.example.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 101") {
		t.Fatalf("upgrade answer: %q %v", buf[:n], err)
	}
	roundTrip(t, c, "frame bytes", "frame bytes")
}

// tryGet returns the body of GET url through the edge, "" when the request fails.
func (e *env) tryGet(url string) string {
	resp, err := e.client().Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
