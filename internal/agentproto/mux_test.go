package agentproto

import (
	"bytes"
	"context"
	"encoding/binary"
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

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
	"go.uber.org/goleak"
)

// Every test ends with no goroutine of its sessions, WebSockets or servers left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testMux's heartbeat is long: the session's timeouts (three heartbeats for a frame to reach
// the WebSocket) are not under test, and a starved machine must not trip them.
var testMux = MuxOptions{Heartbeat: time.Minute}

// guard bounds a step that the code under test must make possible; it is no measure of
// speed: a failing test reports instead of hanging.
const guard = time.Minute

// v2Handler is how the server will use this package: refuse another version before the
// upgrade, accept SubprotocolV2, run the server's end until it ends.
func v2Handler(t testing.TB, ctx context.Context, ends chan<- *serverEnd) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if msg := SubprotocolRefusal(r.Header); msg != "" {
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{SubprotocolV2}})
		if err != nil {
			return
		}
		m, err := NewServerMux(ctx, ws, testMux)
		if err != nil {
			t.Error(err)
			_ = ws.CloseNow()
			return
		}
		ends <- &serverEnd{m, ws}
		<-m.Done()
	}
}

type serverEnd struct {
	m  *ServerMux
	ws *websocket.Conn
}

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }

// pair connects an agent's end to a server's end over a real WebSocket on loopback. Both
// end with the test.
func pair(t testing.TB) (*ServerMux, *AgentMux, *websocket.Conn) {
	t.Helper()
	ctx := t.Context()
	ends := make(chan *serverEnd, 1)
	srv := httptest.NewServer(v2Handler(t, ctx, ends))
	t.Cleanup(srv.Close)
	ws, _, err := websocket.Dial(ctx, wsURL(srv), &websocket.DialOptions{Subprotocols: []string{SubprotocolV2}, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	am, err := NewAgentMux(ctx, ws, testMux)
	if err != nil {
		t.Fatal(err)
	}
	se := <-ends
	t.Cleanup(func() {
		_ = am.Close()
		_ = se.m.Close()
	})
	return se.m, am, se.ws
}

// controlPair opens the control stream as the protocol does: the agent opens, the server
// accepts.
func controlPair(t testing.TB, sm *ServerMux, am *AgentMux) (server, agent *ControlConn) {
	t.Helper()
	agent, err := am.OpenControl()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	server, err = sm.AcceptControl(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return server, agent
}

func header(i int) StreamHeader {
	return StreamHeader{
		TunnelID:   fmt.Sprintf("tn_%d", i),
		Proto:      Protos[i%len(Protos)],
		ClientAddr: netip.AddrPortFrom(netip.MustParseAddr("2001:db8::7"), uint16(10000+i)),
		Hostport:   "app.example.com:443",
	}
}

// readHeader reads a stream's header as the agent will: under a read deadline.
func readHeader(st net.Conn) (StreamHeader, error) {
	_ = st.SetReadDeadline(time.Now().Add(guard))
	defer func() { _ = st.SetReadDeadline(time.Time{}) }()
	return ReadStreamHeader(st)
}

// payload is stream i's bytes: every 8 bytes name the stream and their offset, so bytes
// of another stream or out of place never compare equal.
func payload(i, size int) []byte {
	b := make([]byte, size)
	for off := 0; off+8 <= size; off += 8 {
		binary.BigEndian.PutUint32(b[off:], uint32(i))
		binary.BigEndian.PutUint32(b[off+4:], uint32(off))
	}
	return b
}

func TestControlMessagesBothWays(t *testing.T) {
	sm, am, _ := pair(t)
	server, agent := controlPair(t, sm, am)
	ctx := t.Context()

	if err := agent.Write(ctx, Message{Type: TypeHello, AgentVersion: "2.0.0", OS: "linux"}); err != nil {
		t.Fatal(err)
	}
	if m, err := server.Read(ctx); err != nil || m.Type != TypeHello || m.AgentVersion != "2.0.0" || m.OS != "linux" {
		t.Fatalf("server read %+v, %v", m, err)
	}
	if err := server.Write(ctx, Message{Type: TypeWelcome, SessionID: "ts_1", HeartbeatMillis: 10000}); err != nil {
		t.Fatal(err)
	}
	if m, err := agent.Read(ctx); err != nil || m.Type != TypeWelcome || m.SessionID != "ts_1" || m.HeartbeatMillis != 10000 {
		t.Fatalf("agent read %+v, %v", m, err)
	}

	// Concurrent writers: every message arrives whole, once.
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := agent.Write(ctx, Message{Type: TypeHeartbeat, ID: fmt.Sprintf("%d-%d", w, i), Metadata: strings.Repeat("x", w*1000)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	seen := map[string]bool{}
	for range writers * each {
		m, err := server.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var w, i int
		if _, err := fmt.Sscanf(m.ID, "%d-%d", &w, &i); err != nil || m.Type != TypeHeartbeat || len(m.Metadata) != w*1000 || seen[m.ID] {
			t.Fatalf("message %+v (seen before: %v)", m.ID, seen[m.ID])
		}
		seen[m.ID] = true
	}
	wg.Wait()
}

// TestConcurrentStreamsEcho: 200 visitor streams at once, each 1 MiB of its own bytes sent
// by the server and echoed by the agent, each header read by the agent as written.
func TestConcurrentStreamsEcho(t *testing.T) {
	const streams, size = 200, 1 << 20
	sm, am, _ := pair(t)
	ctx := t.Context()

	var mu sync.Mutex
	headers := map[string]StreamHeader{}
	go func() {
		for {
			st, err := am.AcceptStream(ctx)
			if err != nil {
				return
			}
			go func() {
				defer st.Close()
				h, err := readHeader(st)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				headers[h.TunnelID] = h
				mu.Unlock()
				if _, err := io.Copy(st, st); err != nil {
					t.Error(err)
				}
			}()
		}
	}()

	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			st, err := sm.OpenStream(header(i))
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			want := payload(i, size)
			go func() {
				// In 32 KiB writes, as a proxy's io.Copy from a connection makes them.
				if _, err := io.Copy(st, struct{ io.Reader }{bytes.NewReader(want)}); err != nil {
					t.Error(err)
				}
				_ = st.Close() // half-close: the agent's copy ends, the echo goes on
			}()
			got := make([]byte, size)
			if _, err := io.ReadFull(st, got); err != nil {
				t.Errorf("stream %d: %v", i, err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("stream %d: the echo differs from the bytes sent", i)
			} else if n, err := st.Read(got[:1]); n != 0 || err != io.EOF {
				t.Errorf("stream %d: after the echo, read %d bytes, %v; want the agent's close", i, n, err)
			}
		})
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(headers) != streams {
		t.Fatalf("the agent read %d headers, want %d", len(headers), streams)
	}
	for i := range streams {
		if h := header(i); headers[h.TunnelID] != h {
			t.Errorf("header %d arrived as %+v, want %+v", i, headers[h.TunnelID], h)
		}
	}
}

// TestClosingTheWebSocketEndsEveryStream: a broken WebSocket fails every stream's blocked
// Read on both ends, then Writes, ends both sessions and leaves no goroutine behind.
func TestClosingTheWebSocketEndsEveryStream(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // runs after pair's cleanups
	sm, am, serverWS := pair(t)
	server, agent := controlPair(t, sm, am)

	const streams = 10
	conns := []net.Conn{server.conn, agent.conn}
	for i := range streams {
		st, err := sm.OpenStream(header(i))
		if err != nil {
			t.Fatal(err)
		}
		ast, err := am.AcceptStream(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readHeader(ast); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, st, ast)
	}
	readErrs := make(chan error, len(conns))
	for _, c := range conns {
		go func() {
			_, err := c.Read(make([]byte, 1))
			readErrs <- err
		}()
	}

	_ = serverWS.CloseNow()

	for range conns {
		if err := <-readErrs; err == nil {
			t.Fatal("a Read returned no error after the WebSocket closed")
		}
	}
	<-sm.Done()
	<-am.Done()
	for _, c := range conns {
		if _, err := c.Write([]byte("x")); err == nil {
			t.Fatal("a Write succeeded after the WebSocket closed")
		}
	}
	if _, err := sm.OpenStream(header(0)); !errors.Is(err, yamux.ErrSessionShutdown) {
		t.Fatalf("OpenStream after the close: %v, want %v", err, yamux.ErrSessionShutdown)
	}
	if _, err := am.AcceptStream(t.Context()); err == nil {
		t.Fatal("AcceptStream after the close succeeded")
	}
}

// TestStreamWindow: one stream takes StreamWindow bytes, 32 times yamux's default, while
// its reader has read nothing; the next byte waits for the reader.
func TestStreamWindow(t *testing.T) {
	sm, am, _ := pair(t)
	st, err := sm.OpenStream(header(1))
	if err != nil {
		t.Fatal(err)
	}
	ast, err := am.AcceptStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// The agent writes toward the server, which reads nothing yet.
	want := payload(1, StreamWindow)
	_ = ast.SetWriteDeadline(time.Now().Add(guard))
	if n, err := ast.Write(want); err != nil {
		t.Fatalf("wrote %d of %d bytes unread by the peer: %v", n, len(want), err)
	}
	// The window is spent: a write whose deadline has passed cannot send a byte.
	_ = ast.SetWriteDeadline(longAgo)
	if n, err := ast.Write([]byte{1}); n != 0 || !errors.Is(err, yamux.ErrTimeout) {
		t.Fatalf("a byte past the window: wrote %d, %v; want 0 and %v", n, err, yamux.ErrTimeout)
	}

	// Once the server reads, the window opens again.
	got := make([]byte, len(want))
	if _, err := io.ReadFull(st, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the server read %v and the bytes match: %v", err, bytes.Equal(got, want))
	}
	_ = ast.SetWriteDeadline(time.Now().Add(guard))
	if _, err := ast.Write([]byte{2}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(st, got[:1]); err != nil || got[0] != 2 {
		t.Fatalf("read %v, %v", got[0], err)
	}
}

// TestAgentOpensOnlyTheControlStream: a second stream from the agent ends the session.
func TestAgentOpensOnlyTheControlStream(t *testing.T) {
	sm, am, _ := pair(t)
	controlPair(t, sm, am)
	if _, err := am.sess.OpenStream(); err != nil {
		t.Fatal(err)
	}
	<-sm.Done()
	<-am.Done()
}

// TestSubprotocols: a v1 agent is refused before the upgrade with the version it needs; an
// agent that offers nothing is told which to speak; an agent's end refuses a WebSocket on
// which the server chose another version.
func TestSubprotocols(t *testing.T) {
	ends := make(chan *serverEnd, 1)
	srv := httptest.NewServer(v2Handler(t, t.Context(), ends))
	defer srv.Close()
	for _, c := range []struct {
		offer []string
		want  string
	}{
		{[]string{Subprotocol}, "The agent speaks warren-agent.v1; this server needs warren-agent.v2: update the agent."},
		{nil, "The agent must speak the WebSocket subprotocol warren-agent.v2."},
		{[]string{"warren-agent.v3"}, "The agent must speak the WebSocket subprotocol warren-agent.v2."},
	} {
		ws, resp, err := websocket.Dial(t.Context(), wsURL(srv), &websocket.DialOptions{Subprotocols: c.offer, HTTPClient: srv.Client()})
		if err == nil {
			_ = ws.CloseNow()
			t.Fatalf("offering %v: connected", c.offer)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != c.want {
			t.Errorf("offering %v: %d %q, want 400 %q", c.offer, resp.StatusCode, body, c.want)
		}
	}

	v1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err == nil {
			_ = ws.CloseNow()
		}
	}))
	defer v1.Close()
	ws, _, err := websocket.Dial(t.Context(), wsURL(v1), &websocket.DialOptions{Subprotocols: []string{Subprotocol, SubprotocolV2}, HTTPClient: v1.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if _, err := NewAgentMux(t.Context(), ws, testMux); err == nil || !strings.Contains(err.Error(), `subprotocol "warren-agent.v1", not warren-agent.v2`) {
		t.Fatalf("NewAgentMux on a v1 WebSocket: %v", err)
	}
}

func TestSubprotocolRefusal(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   string
	}{
		{[]string{"warren-agent.v2"}, ""},
		{[]string{"warren-agent.v1, warren-agent.v2"}, ""},
		{[]string{"chat", " warren-agent.v2 "}, ""},
		{[]string{"warren-agent.v1"}, "The agent speaks warren-agent.v1; this server needs warren-agent.v2: update the agent."},
		{[]string{"warren-agent.v2x"}, "The agent must speak the WebSocket subprotocol warren-agent.v2."},
		{nil, "The agent must speak the WebSocket subprotocol warren-agent.v2."},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Sec-WebSocket-Protocol", v)
		}
		if got := SubprotocolRefusal(h); got != c.want {
			t.Errorf("%q: %q, want %q", c.values, got, c.want)
		}
	}
}

func TestMuxOptions(t *testing.T) {
	if _, err := (MuxOptions{}).config(); err == nil {
		t.Fatal("a zero heartbeat was accepted")
	}
	c, err := testMux.config()
	if err != nil {
		t.Fatal(err)
	}
	if err := yamux.VerifyConfig(c); err != nil {
		t.Fatal(err)
	}
	if c.MaxStreamWindowSize != StreamWindow || c.KeepAliveInterval != testMux.Heartbeat || c.ConnectionWriteTimeout != 3*testMux.Heartbeat ||
		c.StreamOpenTimeout != 3*testMux.Heartbeat || c.AcceptBacklog != streamBacklog || c.LogOutput != io.Discard {
		t.Fatalf("config %+v", c)
	}
}

// BenchmarkMuxStream: bulk bytes through one stream, server to agent, over loopback.
func BenchmarkMuxStream(b *testing.B) {
	sm, am, _ := pair(b)
	drained := make(chan int64, 1)
	go func() {
		st, err := am.AcceptStream(b.Context())
		if err != nil {
			b.Error(err)
			return
		}
		defer st.Close()
		if _, err := readHeader(st); err != nil {
			b.Error(err)
		}
		n, _ := io.Copy(io.Discard, st)
		drained <- n
	}()
	st, err := sm.OpenStream(header(0))
	if err != nil {
		b.Fatal(err)
	}
	chunk := payload(0, 256<<10)
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for range b.N {
		if _, err := st.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	_ = st.Close()
	if n := <-drained; n != int64(b.N*len(chunk)) {
		b.Fatalf("the agent read %d bytes, want %d", n, b.N*len(chunk))
	}
}

// BenchmarkMuxOpenStream: a visitor stream's life without data: open, header, close on
// both sides.
func BenchmarkMuxOpenStream(b *testing.B) {
	sm, am, _ := pair(b)
	go func() {
		for {
			st, err := am.AcceptStream(b.Context())
			if err != nil {
				return
			}
			if _, err := readHeader(st); err != nil {
				b.Error(err)
			}
			_ = st.Close()
		}
	}()
	h := header(0)
	hb, _ := h.encode()
	b.SetBytes(int64(len(hb)))
	b.ResetTimer()
	for range b.N {
		st, err := sm.OpenStream(h)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, st); err != nil { // until the agent's close
			b.Fatal(err)
		}
		_ = st.Close()
	}
}
