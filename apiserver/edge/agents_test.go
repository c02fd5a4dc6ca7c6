package edge_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// These tests carry what only the agent plane's streams show: bulk both ways, a WebSocket,
// 1000 streams through one agent, an agent gone mid-request. (Every edge test goes
// through real agents: see env.)

// TestAgentBulkBothWays: 100 MiB up and 100 MiB down at once through a TCP edge and an agent
// arrive whole and in order.
func TestAgentBulkBothWays(t *testing.T) {
	e := newEnv(t)
	addr, port := e.reserveAddr()
	e.agent(agentclient.TunnelConfig{Proto: "tcp", Labels: map[string]string{"app": "bulk"}, ForwardsTo: echo(t, "")})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "bulk"}})
	e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})
	c := e.dialTCP(port)
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	const size = 100 << 20
	sent := sha256.New()
	go func() {
		rng := rand.NewChaCha8([32]byte{7})
		buf := make([]byte, 64<<10)
		for n := 0; n < size; n += len(buf) {
			_, _ = rng.Read(buf)
			sent.Write(buf)
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	got := sha256.New()
	if n, err := io.CopyN(got, c, size); err != nil {
		t.Fatalf("echoed %d of %d bytes: %v", n, size, err)
	}
	if !bytes.Equal(sent.Sum(nil), got.Sum(nil)) {
		t.Fatal("the 100 MiB came back different")
	}
}

// TestAgentWebSocket: a WebSocket upgrade goes through a route and an agent, and messages
// flow both ways.
func TestAgentWebSocket(t *testing.T) {
	e := newEnv(t)
	l := listen(t)
	ws := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, append([]byte("echo: "), msg...)); err != nil {
				return
			}
		}
	})}
	go ws.Serve(l)
	t.Cleanup(func() { ws.Close() })
	e.agent(agentclient.TunnelConfig{Proto: "http", Labels: map[string]string{"app": "ws"}, ForwardsTo: "http://" + l.Addr().String()})
	e.httpsEdge("ws.example.test", e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "ws"}}), nil)
	client := e.client()
	client.Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"http/1.1"}
	c, _, err := websocket.Dial(t.Context(), "wss://ws.example.test/chat", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i := range 3 {
		msg := fmt.Sprintf("message %d", i)
		if err := c.Write(t.Context(), websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.Read(t.Context()); err != nil || string(got) != "echo: "+msg {
			t.Fatalf("read %q %v", got, err)
		}
	}
}

// TestAgentConcurrentStreams: 1000 visitor connections at once through one agent, each
// with its own content.
func TestAgentConcurrentStreams(t *testing.T) {
	e := newEnv(t)
	addr, port := e.reserveAddr()
	e.agent(agentclient.TunnelConfig{Proto: "tcp", Labels: map[string]string{"app": "many"}, ForwardsTo: echo(t, "")})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "many"}})
	e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})
	e.edge.Snapshot(t.Context())
	target, ok := e.edge.TCPAddr(port)
	if !ok {
		t.Fatalf("no listener for port %d", port)
	}
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", target.String(), 30*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			msg := fmt.Sprintf("visitor %04d %s", i, strings.Repeat("x", i))
			if _, err := io.WriteString(c, msg); err != nil {
				errs <- err
				return
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
				errs <- fmt.Errorf("visitor %d read %.20q: %v", i, got, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAgentKilledMidRequest: an agent that goes away while a request is in flight gives the
// visitor an error page, not a hang, and leaves no stream behind; once it is gone, its
// tunnel group has no tunnel online.
func TestAgentKilledMidRequest(t *testing.T) {
	e := newEnv(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	l := listen(t)
	slow := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})}
	go slow.Serve(l)
	t.Cleanup(func() { close(release); slow.Close() })
	token := e.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	client, err := agentclient.New(agentclient.Config{ServerURL: e.srv.URL, Authtoken: token,
		Tunnels: []agentclient.TunnelConfig{{Proto: "http", Labels: map[string]string{"app": "slow"}, ForwardsTo: "http://" + l.Addr().String()}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = client.Run(ctx) }()
	if _, err := client.Wait(t.Context(), func(s agentclient.State) bool { return s.Ready }); err != nil {
		t.Fatal(err)
	}
	e.httpsEdge("slow.example.test", e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "slow"}}), nil)

	type answer struct {
		status int
		code   string
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := e.client().Get("https://slow.example.test/")
		if err != nil {
			answered <- answer{status: -1, code: err.Error()}
			return
		}
		resp.Body.Close()
		answered <- answer{resp.StatusCode, resp.Header.Get("Warren-Error-Code")}
	}()
	<-entered
	kill()
	<-done
	if a := <-answered; a.status != http.StatusBadGateway || a.code != "ERR_8006" {
		t.Fatalf("the visitor got %d %s, want 502 ERR_8006", a.status, a.code)
	}
	// The server drops the tunnel once it has seen the session end: until then a stream
	// cannot be opened (502), after it no tunnel is online (503).
	waitFor(t, "no tunnel online", func() bool {
		resp, err := e.client().Get("https://slow.example.test/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Warren-Error-Code") == "ERR_8005"
	})
	waitFor(t, "no agent stream left", func() bool {
		return strings.Contains(scrape(t, e), "warren_agent_streams 0\n")
	})
}

// scrape returns the server's /metrics page.
func scrape(t *testing.T, e *env) string {
	t.Helper()
	resp, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
