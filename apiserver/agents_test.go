package apiserver_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// testAgent is a minimal agent made of the protocol's messages: it answers heartbeats
// (unless silent) and commands (with answer), and hands every other message to the test.
type testAgent struct {
	t       *testing.T
	ws      *websocket.Conn
	mux     *agentproto.AgentMux
	ctl     *agentproto.ControlConn
	session string
	msgs    chan agentproto.Message
	closed  chan struct{}
	silent  bool
	mu      sync.Mutex
	cmds    []string // commands received
	answer  func(cmd string) agentproto.Message
	// instance is the Hello's; replica the Welcome's.
	instance, replica string
}

// agentURL is the WebSocket URL of a test server's agent endpoint.
func agentURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + agentproto.Path }

// dialV2 opens an agent connection of protocol v2: the WebSocket and its multiplexer.
func dialV2(t *testing.T, base, token string) (*websocket.Conn, *agentproto.AgentMux) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, agentURL(base), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + token}},
		Subprotocols: []string{agentproto.SubprotocolV2},
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	mux, err := agentproto.NewAgentMux(context.Background(), ws, agentproto.MuxOptions{Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mux.Close() })
	return ws, mux
}

// connectAgent dials, says Hello on the control stream and waits for Welcome.
func connectAgent(t *testing.T, base, token string, configure ...func(*testAgent)) *testAgent {
	t.Helper()
	ws, mux := dialV2(t, base, token)
	ctl, err := mux.OpenControl()
	if err != nil {
		t.Fatal(err)
	}
	a := &testAgent{t: t, ws: ws, mux: mux, ctl: ctl, msgs: make(chan agentproto.Message, 16), closed: make(chan struct{}),
		answer: func(string) agentproto.Message { return agentproto.Message{} }}
	for _, f := range configure {
		f(a)
	}
	go a.readLoop()
	welcome := a.request(agentproto.Message{Type: agentproto.TypeHello, AgentVersion: "1.2.3", OS: "linux", Metadata: "m1", Region: "eu", Instance: a.instance})
	if welcome.Type != agentproto.TypeWelcome || !strings.HasPrefix(welcome.SessionID, "ts_") || welcome.HeartbeatMillis < 1 {
		t.Fatalf("welcome = %+v", welcome)
	}
	a.session, a.replica = welcome.SessionID, welcome.Replica
	return a
}

func (a *testAgent) readLoop() {
	defer close(a.closed)
	for {
		m, err := a.ctl.Read(context.Background())
		if err != nil {
			return
		}
		switch {
		case m.Type == agentproto.TypeHeartbeat && !a.silent:
			a.send(agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID})
		case m.Type == agentproto.TypeHeartbeat:
		case m.Type == agentproto.TypeCommand:
			a.mu.Lock()
			a.cmds = append(a.cmds, m.Command)
			a.mu.Unlock()
			res := a.answer(m.Command)
			if res.Type == "none" {
				continue // never answers
			}
			res.Type, res.ID = agentproto.TypeCommandResult, m.ID
			a.send(res)
		default:
			a.msgs <- m
		}
	}
}

func (a *testAgent) send(m agentproto.Message) {
	_ = a.ctl.Write(context.Background(), m)
}

// request sends m with a fresh ID and returns the answer that repeats it.
func (a *testAgent) request(m agentproto.Message) agentproto.Message {
	a.t.Helper()
	m.ID = ids.New("req")
	a.send(m)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-a.msgs:
			if got.ID == m.ID {
				return got
			}
		case <-a.closed:
			a.t.Fatalf("the server closed the connection before answering %s", m.Type)
		case <-timeout:
			a.t.Fatalf("no answer to %s", m.Type)
		}
	}
}

func (a *testAgent) commands() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.cmds...)
}

// waitClosed waits until the server has closed the connection.
func (a *testAgent) waitClosed() {
	a.t.Helper()
	select {
	case <-a.closed:
	case <-time.After(10 * time.Second):
		a.t.Fatal("the server did not close the connection")
	}
}

// credential creates a tunnel credential with acl and returns its ID and token.
func (c *tc) credential(acl ...string) (id, token string) {
	c.t.Helper()
	if acl == nil {
		acl = []string{}
	}
	body := c.ok(201, "POST", "/credentials", map[string]any{"acl": acl})
	return str(body["id"]), str(body["token"])
}

func (c *tc) listIDs(path string) []string {
	c.t.Helper()
	body := c.ok(200, "GET", path, nil)
	var out []string
	for _, member := range []string{"tunnel_sessions", "tunnels", "endpoints", "backends"} {
		if items, ok := body[member].([]any); ok {
			for _, it := range items {
				out = append(out, str(it.(map[string]any)["id"]))
			}
		}
	}
	return out
}

func TestAgentSessionLifecycle(t *testing.T) {
	c := newTC(t, noDelivery)
	credID, token := c.credential()
	// Session events are written for a subscription that names them.
	d := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "agent_session_start.v0"}, map[string]any{"type": "agent_session_stop.v0"}}, "destination_ids": []any{d["id"]}})
	before := len(c.events())
	a := connectAgent(t, c.srv.URL, token)

	sess := c.ok(200, "GET", "/tunnel_sessions/"+a.session, nil)
	equal(t, "session members", keysOf(sess), []string{"agent_version", "credential", "id", "ip", "metadata", "os", "region", "started_at", "transport", "uri"})
	equal(t, "uri", sess["uri"], c.srv.URL+"/tunnel_sessions/"+a.session)
	equal(t, "credential", sess["credential"], map[string]any{"id": credID, "uri": c.srv.URL + "/credentials/" + credID})
	equal(t, "ip", sess["ip"], "127.0.0.1")
	equal(t, "os", sess["os"], "linux")
	equal(t, "agent_version", sess["agent_version"], "1.2.3")
	equal(t, "region", sess["region"], "eu")
	equal(t, "metadata", sess["metadata"], "m1")
	equal(t, "transport", sess["transport"], "warren/v2")
	if _, err := time.Parse(time.RFC3339, str(sess["started_at"])); err != nil {
		t.Fatalf("started_at: %v", err)
	}
	list := c.ok(200, "GET", "/tunnel_sessions", nil)
	equal(t, "list", list["tunnel_sessions"], []any{sess})
	equal(t, "uri", list["uri"], c.srv.URL+"/tunnel_sessions")

	// Filters of details.md §3.3.
	for filter, want := range map[string]int{
		`obj.os == "linux"`: 1, `obj.os == "windows"`: 0, `obj.credential == "` + credID + `"`: 1,
		`obj.ip == "127.0.0.1" && obj.region == "eu"`: 1, `obj.agent_version == "9"`: 0, `obj.metadata == "m1"`: 1,
		`obj.started_at > timestamp(time.now).subtract("1h")`: 1, `obj.id == "` + a.session + `"`: 1,
	} {
		got := c.listIDs("/tunnel_sessions?filter=" + urlEscape(filter))
		if len(got) != want {
			t.Errorf("filter %s: %d sessions, want %d", filter, len(got), want)
		}
	}
	c.fails(400, "ERR_250", "GET", "/tunnel_sessions?filter="+urlEscape(`obj.forwards_to == "x"`), nil)
	c.fails(400, "ERR_227", "GET", "/tunnel_sessions/tn_x", nil)

	// Another account sees nothing.
	other := c.as(c.srv.NewAccount(t))
	equal(t, "other account's sessions", other.listIDs("/tunnel_sessions"), []string(nil))
	other.fails(404, "", "GET", "/tunnel_sessions/"+a.session, nil)

	evs := c.events()
	equal(t, "start event", evs[0]["event_type"], "agent_session_start.v0")
	equal(t, "start principal", evs[0]["principal"], nil)
	equal(t, "start object", evs[0]["object"], sess)

	// Disconnecting ends the session.
	_ = a.ws.Close(websocket.StatusNormalClosure, "bye")
	apiservertest.WaitUntil(t, "the session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 0 })
	r := c.req("GET", "/tunnel_sessions/"+a.session, nil)
	equal(t, "gone session", r.raw[:strings.Index(r.raw, `"details"`)], `{"status_code":404,"msg":"Resource not found",`)
	evs = c.events()
	equal(t, "events written", len(evs), before+2)
	equal(t, "stop event", evs[0]["event_type"], "agent_session_stop.v0")
	equal(t, "stop object", evs[0]["object"], sess)
}

func TestAgentConnectRefused(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	ws := func(extra ...string) []string {
		return append([]string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
			"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", agentproto.SubprotocolV2}, extra...)
	}
	c.fails(403, "ERR_200", "GET", agentproto.Path, nil, ws("Authorization", "")...)
	c.fails(403, "ERR_201", "GET", agentproto.Path, nil, ws("Authorization", "Basic x")...)
	body := c.fails(403, "ERR_202", "GET", agentproto.Path, nil, ws("Authorization", "Bearer not-a-token")...)
	if strings.Contains(str(body["msg"]), "not-a-token") {
		t.Fatal("a malformed token is echoed")
	}
	c.fails(403, "ERR_203", "GET", agentproto.Path, nil, ws("Authorization", "Bearer "+ids.NewToken(ids.New(ids.Credential)))...)
	// An API key is not a tunnel credential.
	c.fails(403, "ERR_203", "GET", agentproto.Path, nil, ws("Authorization", "Bearer "+c.srv.APIKey)...)
	body = c.fails(426, "ERR_215", "GET", agentproto.Path, nil, ws("Authorization", "Bearer "+token, "Sec-WebSocket-Protocol", "other.v9")...)
	equal(t, "msg", str(body["msg"]), "The agent must speak the WebSocket subprotocol warren-agent.v2.")
	equal(t, "sessions", c.listIDs("/tunnel_sessions"), []string(nil))

	// A first message that is not Hello is refused and the socket closed.
	_, mux := dialV2(t, c.srv.URL, token)
	ctl, err := mux.OpenControl()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = ctl.Write(ctx, agentproto.Message{Type: agentproto.TypeBind, ID: "1"})
	m, err := ctl.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "answer", m, agentproto.Message{Type: agentproto.TypeError, ID: "1", ErrorCode: "ERR_215", Error: "The first message must be hello."})
	if _, err := ctl.Read(ctx); err == nil {
		t.Fatal("the connection stayed open")
	}
}

// TestAgentV1Refused: an agent that offers only protocol v1 is refused before the upgrade,
// with 426 and a message that names the version it needs; no session starts.
func TestAgentV1Refused(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, agentURL(c.srv.URL), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{agentproto.Subprotocol},
	})
	if err == nil {
		conn.CloseNow()
		t.Fatal("a v1 agent was upgraded")
	}
	if resp == nil {
		t.Fatalf("no answer: %v", err)
	}
	var body struct {
		ErrorCode  string            `json:"error_code"`
		StatusCode int               `json:"status_code"`
		Msg        string            `json:"msg"`
		Details    map[string]string `json:"details"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	equal(t, "status", resp.StatusCode, http.StatusUpgradeRequired)
	equal(t, "Upgrade", resp.Header.Get("Upgrade"), "websocket")
	equal(t, "code", body.ErrorCode, "ERR_215")
	equal(t, "msg", body.Msg, "The agent speaks warren-agent.v1; this server needs warren-agent.v2: update the agent.")
	equal(t, "param", body.Details["param"], "Sec-WebSocket-Protocol")
	equal(t, "sessions", c.listIDs("/tunnel_sessions"), []string(nil))
}

// TestAgentInvalidUTF8: a control message that is not UTF-8, at Hello or in a running
// session, is refused (ERR_213) and ends the connection, instead of being read with U+FFFD.
func TestAgentInvalidUTF8(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	for _, tt := range []struct {
		name  string
		hello bool // say Hello first
		frame string
	}{
		{"in the hello", false, `{"type":"hello","agent_version":"1.2.3","os":"linux` + "\xff" + `"}`},
		{"in a session", true, `{"type":"heartbeat","id":"` + "\xc3\x28" + `"}`},
		{"a lone surrogate", true, `{"type":"heartbeat","id":"` + "\xed\xa0\x80" + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			raw := rawControlStream(t, c.srv.URL, token)
			ctl := agentproto.NewControlConn(raw)
			if tt.hello {
				_ = ctl.Write(ctx, agentproto.Message{Type: agentproto.TypeHello, ID: "1", AgentVersion: "1.2.3", OS: "linux"})
				if m, err := ctl.Read(ctx); err != nil || m.Type != agentproto.TypeWelcome {
					t.Fatalf("welcome: %+v, %v", m, err)
				}
			}
			frame := binary.BigEndian.AppendUint32(nil, uint32(len(tt.frame)))
			if _, err := raw.Write(append(frame, tt.frame...)); err != nil {
				t.Fatal(err)
			}
			// The Error, then the end; the server's own heartbeats may come in between.
			var answers []agentproto.Message
			for {
				m, err := ctl.Read(ctx)
				if err != nil {
					break
				}
				if m.Type != agentproto.TypeHeartbeat {
					answers = append(answers, m)
				}
			}
			equal(t, "answers", answers, []agentproto.Message{{Type: agentproto.TypeError, ErrorCode: "ERR_213", Error: "A control message must be one JSON object of valid UTF-8, at most 1 MiB."}})
		})
	}
}

// rawControlStream opens the control stream of a v2 connection without its framing, to
// send what a ControlConn never would.
func rawControlStream(t *testing.T, base, token string) net.Conn {
	t.Helper()
	ws, _, _ := websocket.Dial(context.Background(), agentURL(base), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{agentproto.SubprotocolV2},
	})
	if ws == nil {
		t.Fatal("dial failed")
	}
	t.Cleanup(func() { ws.CloseNow() })
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = io.Discard
	sess, err := yamux.Client(websocket.NetConn(context.Background(), ws, websocket.MessageBinary), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	st, err := sess.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAgentBindACL(t *testing.T) {
	c := newTC(t)
	for _, d := range []string{"app.example.com", "other.example.com", "*.wild.example.com"} {
		c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": d})
	}
	addr := str(c.ok(201, "POST", "/reserved_addrs", map[string]any{})["addr"])
	addr2 := str(c.ok(201, "POST", "/reserved_addrs", map[string]any{})["addr"])
	host := func(h string) agentproto.Message {
		return agentproto.Message{Type: agentproto.TypeBind, Proto: "https", Hostname: h, ForwardsTo: "http://localhost:8080"}
	}
	tcp := func(a string) agentproto.Message {
		return agentproto.Message{Type: agentproto.TypeBind, Proto: "tcp", Addr: a, ForwardsTo: "localhost:22"}
	}
	labels := func(kv ...string) agentproto.Message {
		m := agentproto.Message{Type: agentproto.TypeBind, Labels: map[string]string{}, ForwardsTo: "http://localhost:80"}
		for i := 0; i < len(kv); i += 2 {
			m.Labels[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		acl     []string
		allowed []agentproto.Message
		denied  []agentproto.Message
	}{
		{acl: nil, allowed: []agentproto.Message{host("app.example.com"), tcp(addr), labels("env", "prod")}},
		{acl: []string{"*"}, allowed: []agentproto.Message{host("other.example.com"), tcp(addr), labels("a", "b")}},
		{acl: []string{"bind:app.example.com"}, allowed: []agentproto.Message{host("app.example.com")},
			denied: []agentproto.Message{host("other.example.com"), tcp(addr), labels("env", "prod")}},
		{acl: []string{"bind:*.wild.example.com"},
			allowed: []agentproto.Message{host("x.wild.example.com"), host("a.b.wild.example.com"), host("*.wild.example.com")},
			denied:  []agentproto.Message{host("app.example.com")}},
		{acl: []string{"bind:" + addr}, allowed: []agentproto.Message{tcp(addr)}, denied: []agentproto.Message{tcp(addr2), host("app.example.com")}},
		{acl: []string{"bind:env=prod"}, allowed: []agentproto.Message{labels("env", "prod")},
			denied: []agentproto.Message{labels("env", "dev"), labels("env", "prod", "team", "a"), host("app.example.com")}},
		{acl: []string{"bind:*=prod"}, allowed: []agentproto.Message{labels("team", "prod")}, denied: []agentproto.Message{labels("team", "dev")}},
		{acl: []string{"bind:env=*", "bind:team=a"}, allowed: []agentproto.Message{labels("env", "x", "team", "a")}, denied: []agentproto.Message{labels("team", "b")}},
	}
	for _, tt := range cases {
		_, token := c.credential(tt.acl...)
		a := connectAgent(t, c.srv.URL, token)
		for _, m := range tt.allowed {
			got := a.request(m)
			if got.Type != agentproto.TypeBound || !strings.HasPrefix(got.TunnelID, "tn_") {
				t.Fatalf("acl %v, bind %+v: %+v", tt.acl, m, got)
			}
			a.request(agentproto.Message{Type: agentproto.TypeHeartbeat}) // unbind answers nothing: sync on a heartbeat
			a.send(agentproto.Message{Type: agentproto.TypeUnbind, TunnelID: got.TunnelID})
		}
		for _, m := range tt.denied {
			got := a.request(m)
			if got.Type != agentproto.TypeError || got.ErrorCode != "ERR_215" || !strings.Contains(got.Error, "ACL does not allow") {
				t.Fatalf("acl %v, bind %+v: %+v", tt.acl, m, got)
			}
		}
		_ = a.ws.Close(websocket.StatusNormalClosure, "")
	}
	apiservertest.WaitUntil(t, "every tunnel is gone", func() bool { return len(c.listIDs("/tunnels")) == 0 })

	// Ownership and uniqueness.
	otherAccount := c.as(c.srv.NewAccount(t))
	otherAccount.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "theirs.example.org"})
	_, token := c.credential()
	a := connectAgent(t, c.srv.URL, token)
	for _, tt := range []struct {
		m    agentproto.Message
		code string
	}{
		{host("theirs.example.org"), "ERR_7118"},
		{host("nobody.example.net"), "ERR_7117"},
		{host("deep.app.example.com"), "ERR_7117"}, // not under a wildcard
		{tcp("tcp.example.net:1"), "ERR_7113"},
		{agentproto.Message{Type: agentproto.TypeBind, Proto: "ftp", Hostname: "app.example.com"}, "ERR_215"},
		{agentproto.Message{Type: agentproto.TypeBind, Proto: "https", Hostname: "app.example.com", Addr: addr}, "ERR_215"},
		{agentproto.Message{Type: agentproto.TypeBind, Proto: "tcp", Hostname: "app.example.com"}, "ERR_215"},
		{agentproto.Message{Type: agentproto.TypeBind, Labels: map[string]string{"a=b": "c"}}, "ERR_6531"},
	} {
		got := a.request(tt.m)
		if got.Type != agentproto.TypeError || got.ErrorCode != tt.code {
			t.Fatalf("bind %+v: %+v, want %s", tt.m, got, tt.code)
		}
	}
	bound := a.request(host("App.Example.com"))
	equal(t, "url", bound.URL, "https://app.example.com")
	b := connectAgent(t, c.srv.URL, token)
	if got := b.request(host("app.example.com")); got.ErrorCode != "ERR_7119" {
		t.Fatalf("second bind of a hostname: %+v", got)
	}
	tcpBound := b.request(tcp(addr))
	equal(t, "tcp url", tcpBound.URL, "tcp://"+addr)

	tunnel := c.ok(200, "GET", "/tunnels/"+bound.TunnelID, nil)
	equal(t, "tunnel members", keysOf(tunnel), []string{"backends", "endpoint", "forwards_to", "id", "metadata", "proto", "public_url", "region", "started_at", "tunnel_session"})
	equal(t, "tunnel_session", tunnel["tunnel_session"], map[string]any{"id": a.session, "uri": c.srv.URL + "/tunnel_sessions/" + a.session})
	equal(t, "endpoint", tunnel["endpoint"], map[string]any{"id": bound.EndpointID, "uri": c.srv.URL + "/endpoints/" + bound.EndpointID})
	equal(t, "backends", tunnel["backends"], []any{})
	equal(t, "public_url", tunnel["public_url"], "https://app.example.com")
	ep := c.ok(200, "GET", "/endpoints/"+bound.EndpointID, nil)
	equal(t, "endpoint members", keysOf(ep), []string{"bindings", "created_at", "description", "domain", "edge", "host", "hostport", "id", "metadata", "name", "pooling_enabled", "port", "principal", "proto", "public_url", "region", "scheme", "tcp_addr", "traffic_policy", "tunnel", "tunnel_session", "type", "updated_at", "upstream_protocol", "upstream_url", "uri", "url"})
	equal(t, "endpoint type", ep["type"], "agent")
	equal(t, "bindings", ep["bindings"], []any{"public"})
	equal(t, "hostport", ep["hostport"], "app.example.com:443")
	equal(t, "upstream_url", ep["upstream_url"], "http://localhost:8080")
	equal(t, "tunnel ref", ep["tunnel"].(map[string]any)["id"], bound.TunnelID)
	equal(t, "edge", ep["edge"], nil)
	domainID := str(ep["domain"].(map[string]any)["id"])
	// A domain a tunnel is bound to cannot be deleted (ERR_446).
	c.fails(400, "ERR_446", "DELETE", "/reserved_domains/"+domainID, nil)
	equal(t, "endpoint filter", len(c.listIDs("/endpoints?filter="+urlEscape(`obj.proto == "tcp"`))), 1)
	equal(t, "endpoint list", len(c.listIDs("/endpoints")), 2)
}

func TestAgentTunnelGroups(t *testing.T) {
	c := newTC(t)
	prod := str(c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"env": "prod"}})["id"])
	both := str(c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"env": "prod", "team": "a"}})["id"])
	dev := str(c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"env": "dev"}})["id"])
	_, token := c.credential("bind:env=*", "bind:team=*")
	a := connectAgent(t, c.srv.URL, token)
	bound := a.request(agentproto.Message{Type: agentproto.TypeBind, Labels: map[string]string{"env": "prod", "team": "a"}, ForwardsTo: "http://localhost:80"})
	if bound.Type != agentproto.TypeBound || bound.EndpointID != "" || bound.URL != "" {
		t.Fatalf("labeled bind: %+v", bound)
	}
	tunnel := c.ok(200, "GET", "/tunnels/"+bound.TunnelID, nil)
	equal(t, "labels", tunnel["labels"], map[string]any{"env": "prod", "team": "a"})
	equal(t, "endpoint", tunnel["endpoint"], nil)
	equal(t, "proto", tunnel["proto"], "http")
	ref := func(id, path string) any { return map[string]any{"id": id, "uri": c.srv.URL + path + "/" + id} }
	equal(t, "backends", tunnel["backends"], []any{ref(both, "/backends/tunnel_group"), ref(prod, "/backends/tunnel_group")})
	equal(t, "prod tunnels", c.ok(200, "GET", "/backends/tunnel_group/"+prod, nil)["tunnels"], []any{ref(bound.TunnelID, "/tunnels")})
	equal(t, "dev tunnels", c.ok(200, "GET", "/backends/tunnel_group/"+dev, nil)["tunnels"], []any{})
	// A group created later, or changed, matches at once.
	c.ok(200, "PATCH", "/backends/tunnel_group/"+dev, map[string]any{"labels": map[string]string{"team": "a"}})
	equal(t, "patched tunnels", c.ok(200, "GET", "/backends/tunnel_group/"+dev, nil)["tunnels"], []any{ref(bound.TunnelID, "/tunnels")})

	_ = a.ws.Close(websocket.StatusNormalClosure, "")
	apiservertest.WaitUntil(t, "the group's tunnel is gone", func() bool {
		tunnels, _ := c.ok(200, "GET", "/backends/tunnel_group/"+prod, nil)["tunnels"].([]any)
		return len(tunnels) == 0
	})
	c.fails(404, "", "GET", "/tunnels/"+bound.TunnelID, nil)
}

func TestAgentHeartbeatTimeout(t *testing.T) {
	// 200 ms: short for the test, long enough that a loaded machine does not stall the
	// answering agent for three intervals.
	c := newTC(t, func(o *apiserver.Options) { o.Agents.Heartbeat = 200 * time.Millisecond })
	_, token := c.credential()
	alive := connectAgent(t, c.srv.URL, token)
	silent := connectAgent(t, c.srv.URL, token, func(a *testAgent) { a.silent = true })
	silent.waitClosed()
	apiservertest.WaitUntil(t, "the silent agent's session is gone", func() bool {
		return c.req("GET", "/tunnel_sessions/"+silent.session, nil).status == 404
	})
	// The agent that answers heartbeats stays connected through many intervals.
	for range 5 {
		alive.request(agentproto.Message{Type: agentproto.TypeHeartbeat})
		time.Sleep(200 * time.Millisecond)
	}
	c.ok(200, "GET", "/tunnel_sessions/"+alive.session, nil)
}

func TestAgentCredentialDeleted(t *testing.T) {
	c := newTC(t)
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	credID, token := c.credential()
	keepID, keepToken := c.credential()
	a := connectAgent(t, c.srv.URL, token)
	bound := a.request(agentproto.Message{Type: agentproto.TypeBind, Proto: "http", Hostname: "app.example.com"})
	kept := connectAgent(t, c.srv.URL, keepToken)
	c.ok(204, "DELETE", "/credentials/"+credID, nil)
	a.waitClosed()
	c.fails(404, "", "GET", "/tunnel_sessions/"+a.session, nil)
	c.fails(404, "", "GET", "/tunnels/"+bound.TunnelID, nil)
	c.fails(404, "", "GET", "/endpoints/"+bound.EndpointID, nil)
	equal(t, "sessions", c.listIDs("/tunnel_sessions"), []string{kept.session})
	c.ok(204, "DELETE", "/credentials/"+keepID, nil)
	kept.waitClosed()
	// The token no longer connects.
	c.fails(403, "ERR_203", "GET", agentproto.Path, nil, "Authorization", "Bearer "+token)
}

func TestAgentCommands(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.Agents.CommandTimeout = 200 * time.Millisecond })
	_, token := c.credential()
	a := connectAgent(t, c.srv.URL, token, func(a *testAgent) {
		a.answer = func(cmd string) agentproto.Message {
			if cmd == agentproto.CommandUpdate {
				return agentproto.Message{ErrorCode: "ERR_809", Error: "No update is available."}
			}
			return agentproto.Message{}
		}
	})
	path := "/tunnel_sessions/" + a.session
	body := c.fails(400, "ERR_809", "POST", path+"/update", map[string]any{})
	equal(t, "msg", body["msg"], "No update is available.")
	c.fails(400, "ERR_214", "POST", path+"/stop", map[string]any{"now": true})
	// A restart or stop the agent answered ends the session before the answer is given, and
	// closes its socket: an agent reconnecting at once finds its hostnames free. With an
	// Idempotency-Key a command (the key is claimed first: its effect is outside the store)
	// reaches the agent once; the repeat is the replay.
	first := c.req("POST", path+"/restart", map[string]any{}, idemHeader, "restart-once")
	again := c.req("POST", path+"/restart", map[string]any{}, idemHeader, "restart-once")
	equal(t, "keyed restarts", []any{first.status, first.header.Get("Idempotent-Replayed"), again.status, again.header.Get("Idempotent-Replayed")}, []any{204, "", 204, "true"})
	c.fails(404, "", "GET", path, nil)
	a.waitClosed()
	equal(t, "commands", a.commands(), []string{"update", "restart"})
	b := connectAgent(t, c.srv.URL, token)
	c.ok(204, "POST", "/tunnel_sessions/"+b.session+"/stop", map[string]any{})
	c.fails(404, "", "GET", "/tunnel_sessions/"+b.session, nil)
	b.waitClosed()
	equal(t, "commands", b.commands(), []string{"stop"})

	// An agent that never answers: 504 ERR_810 after the timeout.
	mute := connectAgent(t, c.srv.URL, token, func(a *testAgent) {
		a.answer = func(string) agentproto.Message { return agentproto.Message{Type: "none"} }
	})
	c.fails(504, "ERR_810", "POST", "/tunnel_sessions/"+mute.session+"/restart", map[string]any{})
	// A failure without a code gets the command's own.
	failing := connectAgent(t, c.srv.URL, token, func(a *testAgent) {
		a.answer = func(string) agentproto.Message { return agentproto.Message{Error: "cannot"} }
	})
	c.fails(400, "ERR_808", "POST", "/tunnel_sessions/"+failing.session+"/restart", map[string]any{})

	// A gone session, an unknown one and another account's are the plain 404.
	c.fails(404, "", "POST", path+"/restart", map[string]any{})
	c.fails(404, "", "POST", "/tunnel_sessions/"+ids.New(ids.TunnelSession)+"/stop", map[string]any{})
	c.as(c.srv.NewAccount(t)).fails(404, "", "POST", "/tunnel_sessions/"+failing.session+"/update", map[string]any{})
}

// TestAgentCommandsAcrossReplicas runs two servers on one store: a command sent through the
// replica that does not hold the agent's socket goes through the store to the one that does.
func TestAgentCommandsAcrossReplicas(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) {
		o.Agents.CommandPoll, o.Agents.Heartbeat = 10*time.Millisecond, 50*time.Millisecond
	})
	second, err := apiserver.New(context.Background(), apiserver.Options{
		Store: c.srv.Store, BaseURL: c.srv.URL, BootstrapAPIKey: c.srv.APIKey,
		Agents: agentplane.Options{CommandPoll: 10 * time.Millisecond, CommandTimeout: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(second)
	t.Cleanup(func() { ts.Close(); _ = second.Close() })
	other := &tc{t: t, srv: &apiservertest.Server{URL: ts.URL}, token: c.srv.APIKey}

	credID, token := c.credential()
	a := connectAgent(t, c.srv.URL, token, func(a *testAgent) {
		a.answer = func(cmd string) agentproto.Message {
			if cmd == agentproto.CommandUpdate {
				return agentproto.Message{ErrorCode: "ERR_809", Error: "No update is available."}
			}
			return agentproto.Message{}
		}
	})
	path := "/tunnel_sessions/" + a.session
	other.ok(200, "GET", path, nil)
	other.fails(400, "ERR_809", "POST", path+"/update", map[string]any{})
	// The holder ends a restarted session before it writes the answer back.
	other.ok(204, "POST", path+"/restart", map[string]any{})
	other.fails(404, "", "GET", path, nil)
	a.waitClosed()
	equal(t, "commands", a.commands(), []string{"update", "restart"})

	// A credential deleted through the other replica ends the session held by the first.
	b := connectAgent(t, c.srv.URL, token)
	other.ok(204, "DELETE", "/credentials/"+credID, nil)
	b.waitClosed()
	c.fails(404, "", "GET", "/tunnel_sessions/"+b.session, nil)
}

// TestAgentIPRestriction: the account's IP restriction of type agent refuses, before the
// upgrade, an agent connecting from an address its policies do not allow (403 ERR_220);
// not enforced, it lets the agent in.
func TestAgentIPRestriction(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(policy, "198.51.100.0/24", "allow")
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "agent", "enforced": true, "ip_policy_ids": []string{policy}})["id"])

	c.from("203.0.113.9:1")
	refused := dialAgent(t, c.srv.URL, token)
	equal(t, "refused", []any{refused.status, refused.errorCode, refused.msg},
		[]any{403, "ERR_220", "The IP address 203.0.113.9 is not allowed by the account's agent IP restriction " + x + "."})
	c.from("198.51.100.7:1")
	equal(t, "an allowed address", connect(t, c.srv.URL, token).welcome.Type, agentproto.TypeWelcome)

	c.ok(200, "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": false})
	c.from("203.0.113.9:1")
	equal(t, "not enforced", connect(t, c.srv.URL, token).welcome.Type, agentproto.TypeWelcome)
	c.from("")
}
