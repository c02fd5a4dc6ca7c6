package agentclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// peer is the protocol's server end, as small as the tests need: it authenticates the
// token, upgrades with the subprotocol and hands every connection to the test, which plays
// the server's part message by message.
type peer struct {
	srv   *httptest.Server
	token string
	conns chan *peerConn

	mu       sync.Mutex
	requests int // handshakes received, refused ones included
	// noSubprotocol: accept without choosing the subprotocol (a server of another version).
	noSubprotocol bool
}

// peerConn is one accepted agent connection.
type peerConn struct {
	ws  *websocket.Conn
	req *http.Request
}

const testToken = "2abcdefghijklmnopqrstuvwxyzA_3secretpartofthetoken0123456789"

func newPeer(t *testing.T) *peer {
	t.Helper()
	p := &peer{token: testToken, conns: make(chan *peerConn, 16)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests++
		noSub := p.noSubprotocol
		p.mu.Unlock()
		if r.URL.Path != agentproto.Path {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+p.token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(api.Error{ErrorCode: "ERR_203", StatusCode: 403, Msg: "The authtoken is not valid."})
			return
		}
		opts := &websocket.AcceptOptions{Subprotocols: []string{agentproto.Subprotocol}}
		if noSub {
			opts = nil
		}
		ws, err := websocket.Accept(w, r, opts)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		p.conns <- &peerConn{ws: ws, req: r}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) handshakes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// accept returns the next connection the agent opens.
func (p *peer) accept(t *testing.T) *peerConn {
	t.Helper()
	select {
	case pc := <-p.conns:
		t.Cleanup(func() { _ = pc.ws.CloseNow() })
		return pc
	case <-t.Context().Done():
		t.Fatal("the agent never connected")
	case <-time.After(10 * time.Second): // a hang guard, not an assertion on speed
		t.Fatal("the agent never connected")
	}
	return nil
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a hang guard
	t.Cleanup(cancel)
	return ctx
}

// read returns the agent's next message other than a heartbeat (which it answers).
func (pc *peerConn) read(t *testing.T) agentproto.Message {
	t.Helper()
	for {
		m := pc.readAny(t)
		if m.Type == agentproto.TypeHeartbeat {
			pc.send(t, agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID})
			continue
		}
		return m
	}
}

func (pc *peerConn) readAny(t *testing.T) agentproto.Message {
	t.Helper()
	var m agentproto.Message
	if err := wsjson.Read(waitCtx(t), pc.ws, &m); err != nil {
		t.Fatalf("reading the agent's message: %v", err)
	}
	return m
}

func (pc *peerConn) send(t *testing.T, m agentproto.Message) {
	t.Helper()
	if err := wsjson.Write(waitCtx(t), pc.ws, m); err != nil {
		t.Fatalf("sending %s: %v", m.Type, err)
	}
}

// closed waits for the agent to close the connection and returns the close status.
func (pc *peerConn) closed(t *testing.T) websocket.StatusCode {
	t.Helper()
	for {
		var m agentproto.Message
		err := wsjson.Read(waitCtx(t), pc.ws, &m)
		if err != nil {
			return websocket.CloseStatus(err)
		}
		if m.Type != agentproto.TypeHeartbeat && m.Type != agentproto.TypeHeartbeatAck {
			t.Fatalf("the agent sent %+v instead of closing", m)
		}
	}
}

// welcome reads the Hello, answers Welcome and answers every bind with Bound; it returns
// the Hello.
func (pc *peerConn) welcome(t *testing.T, sessionID string, tunnels int) agentproto.Message {
	t.Helper()
	hello := pc.read(t)
	if hello.Type != agentproto.TypeHello {
		t.Fatalf("first message %+v, want hello", hello)
	}
	pc.send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: sessionID, HeartbeatSeconds: 3600})
	for i := range tunnels {
		b := pc.read(t)
		if b.Type != agentproto.TypeBind {
			t.Fatalf("message %+v, want bind", b)
		}
		pc.send(t, agentproto.Message{Type: agentproto.TypeBound, ID: b.ID, TunnelID: "tn_" + sessionID + string(rune('a'+i)), EndpointID: "ep_x", URL: "https://" + b.Hostname})
	}
	return hello
}
