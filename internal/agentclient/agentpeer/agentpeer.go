// Package agentpeer is the server end of the agent protocol v2, as small as tests need: it
// authenticates the token, upgrades with the subprotocol, runs the multiplexer and hands
// every connection to the test, which plays the server's part message by message on the
// control stream and opens visitor streams. It checks what an agent sends; the real server
// is in apiserver/agentplane.
package agentpeer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Peer serves the protocol at URL; a wrong token gets 403 ERR_203 at the handshake.
type Peer struct {
	URL   string
	srv   *httptest.Server
	token string
	conns chan *Conn

	mu       sync.Mutex
	requests int // handshakes received, refused ones included
	// noSubprotocol: accept without choosing the subprotocol (a server of another version).
	noSubprotocol bool
	turnAway      []refusal // the answers of the next handshakes, in order
}

// refusal is an HTTP answer to a handshake.
type refusal struct {
	status     int
	body       api.Error
	retryAfter string
}

// Conn is one accepted agent connection.
type Conn struct {
	WS  *websocket.Conn
	Req *http.Request // the handshake

	sess    *yamux.Session // nil when the peer chose no subprotocol
	ctl     *agentproto.ControlConn
	readErr *closeRecorder
}

// closeRecorder keeps the first error the WebSocket's reads returned: the agent's close.
type closeRecorder struct {
	net.Conn
	once sync.Once
	err  error
	done chan struct{}
}

func (c *closeRecorder) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.once.Do(func() { c.err = err; close(c.done) })
	}
	return n, err
}

// New starts a peer that accepts token; it stops when the test ends.
func New(t testing.TB, token string) *Peer {
	t.Helper()
	p := &Peer{token: token, conns: make(chan *Conn, 16)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests++
		noSub := p.noSubprotocol
		var refuse *refusal
		if len(p.turnAway) > 0 && r.URL.Path == agentproto.Path {
			refuse, p.turnAway = &p.turnAway[0], p.turnAway[1:]
		}
		p.mu.Unlock()
		if r.URL.Path != agentproto.Path {
			http.NotFound(w, r)
			return
		}
		if refuse != nil {
			w.Header().Set("Content-Type", "application/json")
			if refuse.retryAfter != "" {
				w.Header().Set("Retry-After", refuse.retryAfter)
			}
			w.WriteHeader(refuse.status)
			_ = json.NewEncoder(w).Encode(refuse.body)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+p.token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(api.Error{ErrorCode: "ERR_203", StatusCode: 403, Msg: "The authtoken is not valid."})
			return
		}
		opts := &websocket.AcceptOptions{Subprotocols: []string{agentproto.SubprotocolV2}}
		if noSub {
			opts = nil
		}
		ws, err := websocket.Accept(w, r, opts)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		pc := &Conn{WS: ws, Req: r}
		if !noSub {
			// A yamux server as agentproto.ServerMux runs it, without keepalives (tests).
			pc.readErr = &closeRecorder{Conn: websocket.NetConn(context.Background(), ws, websocket.MessageBinary), done: make(chan struct{})}
			cfg := yamux.DefaultConfig()
			cfg.EnableKeepAlive, cfg.LogOutput, cfg.MaxStreamWindowSize = false, io.Discard, agentproto.StreamWindow
			if pc.sess, err = yamux.Server(pc.readErr, cfg); err != nil {
				t.Errorf("yamux: %v", err)
				return
			}
		}
		p.conns <- pc
	}))
	t.Cleanup(p.srv.Close)
	p.URL = p.srv.URL
	return p
}

// RefuseSubprotocol makes the peer accept connections without choosing the protocol's
// subprotocol, as a server of another protocol version would.
func (p *Peer) RefuseSubprotocol() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noSubprotocol = true
}

// TurnAway makes the peer answer the next n handshakes with status, the API's error body of
// code and msg, and Retry-After retryAfter ("" for none), as a server over its limits does.
func (p *Peer) TurnAway(n, status int, code, msg, retryAfter string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range n {
		p.turnAway = append(p.turnAway, refusal{status: status, body: api.Error{ErrorCode: code, StatusCode: status, Msg: msg}, retryAfter: retryAfter})
	}
}

// Handshakes counts the handshakes received, refused ones included.
func (p *Peer) Handshakes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Accept returns the next connection an agent opens.
func (p *Peer) Accept(t testing.TB) *Conn {
	t.Helper()
	select {
	case pc := <-p.conns:
		t.Cleanup(func() { _ = pc.WS.CloseNow() })
		if pc.sess != nil {
			t.Cleanup(func() { _ = pc.sess.Close() })
			st, err := pc.sess.AcceptStreamWithContext(WaitCtx(t))
			if err != nil {
				t.Fatalf("the agent opened no control stream: %v", err)
			}
			pc.ctl = agentproto.NewControlConn(st)
		}
		return pc
	case <-t.Context().Done():
		t.Fatal("the agent never connected")
	case <-time.After(10 * time.Second): // a hang guard, not an assertion on speed
		t.Fatal("the agent never connected")
	}
	return nil
}

// WaitCtx bounds a wait so that a hung agent fails the test instead of hanging it.
func WaitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard
	t.Cleanup(cancel)
	return ctx
}

// Read returns the agent's next message other than a heartbeat (which it answers).
func (pc *Conn) Read(t testing.TB) agentproto.Message {
	t.Helper()
	for {
		m := pc.ReadAny(t)
		if m.Type == agentproto.TypeHeartbeat {
			pc.Send(t, agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID})
			continue
		}
		return m
	}
}

// ReadAny returns the agent's next message.
func (pc *Conn) ReadAny(t testing.TB) agentproto.Message {
	t.Helper()
	m, err := pc.ctl.Read(WaitCtx(t))
	if err != nil {
		t.Fatalf("reading the agent's message: %v", err)
	}
	return m
}

// Send sends m to the agent.
func (pc *Conn) Send(t testing.TB, m agentproto.Message) {
	t.Helper()
	// A write that learns of the session's end may still have gone out: yamux reports the
	// shutdown when the agent closes at once on reading it (an Error, a stop). What the agent
	// did with it is for the test to check.
	if err := pc.ctl.Write(WaitCtx(t), m); err != nil && !errors.Is(err, yamux.ErrSessionShutdown) {
		t.Fatalf("sending %s: %v", m.Type, err)
	}
}

// Closed waits for the agent to close the connection and returns the close status;
// heartbeats meanwhile are ignored, any other message fails the test.
func (pc *Conn) Closed(t testing.TB) websocket.StatusCode {
	t.Helper()
	for {
		if pc.sess == nil { // no subprotocol: the agent closes before any message
			_, _, err := pc.WS.Read(WaitCtx(t))
			return websocket.CloseStatus(err)
		}
		m, err := pc.ctl.Read(WaitCtx(t))
		if err != nil {
			select {
			case <-pc.readErr.done:
			case <-WaitCtx(t).Done():
				t.Fatal("the agent's close never came")
			}
			if errors.Is(pc.readErr.err, io.EOF) {
				return websocket.StatusNormalClosure // NetConn reads a normal close (or going away) as EOF
			}
			return websocket.CloseStatus(pc.readErr.err)
		}
		if m.Type != agentproto.TypeHeartbeat && m.Type != agentproto.TypeHeartbeatAck {
			t.Fatalf("the agent sent %+v instead of closing", m)
		}
	}
}

// Welcome reads the Hello, answers Welcome (heartbeats every hour: none in a test) and
// answers the next tunnels binds with Bound (tunnel IDs tn_<session ID>a, …b, …); it
// returns the Hello.
func (pc *Conn) Welcome(t testing.TB, sessionID string, tunnels int) agentproto.Message {
	t.Helper()
	hello := pc.Read(t)
	if hello.Type != agentproto.TypeHello {
		t.Fatalf("first message %+v, want hello", hello)
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: sessionID, HeartbeatMillis: 3_600_000})
	for i := range tunnels {
		b := pc.Read(t)
		if b.Type != agentproto.TypeBind {
			t.Fatalf("message %+v, want bind", b)
		}
		pc.Send(t, agentproto.Message{Type: agentproto.TypeBound, ID: b.ID, TunnelID: "tn_" + sessionID + string(rune('a'+i)), EndpointID: "ep_x", URL: "https://" + b.Hostname})
	}
	return hello
}

// OpenStream opens a visitor stream to the agent with h first, as the server does; the
// agent's StreamResult comes first on it (agentproto.ReadStreamResult).
func (pc *Conn) OpenStream(t testing.TB, h agentproto.StreamHeader) net.Conn {
	t.Helper()
	st, err := pc.sess.OpenStream()
	if err != nil {
		t.Fatalf("opening a stream: %v", err)
	}
	if err := agentproto.WriteStreamHeader(st, h); err != nil {
		t.Fatalf("writing the stream header: %v", err)
	}
	return st
}
