package agentclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient/agentpeer"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// agent is a Client run by a test: its Run's result, its logs and the waits it chose
// between attempts (recorded, not slept).
type agent struct {
	*Client
	done  chan error
	logs  *observer.ObservedLogs
	mu    sync.Mutex
	waits []time.Duration
}

func (a *agent) backoffs() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Duration(nil), a.waits...)
}

const testToken = "2abcdefghijklmnopqrstuvwxyzA_3secretpartofthetoken0123456789"

var webTunnel = TunnelConfig{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}

func startAgent(t *testing.T, p *agentpeer.Peer, cfg Config, setup ...func(*Client)) *agent {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.ServerURL, cfg.Logger = p.URL, zap.New(core)
	if cfg.Authtoken == "" {
		cfg.Authtoken = testToken
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{Client: c, done: make(chan error, 1), logs: logs}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		a.mu.Lock()
		a.waits = append(a.waits, d)
		a.mu.Unlock()
		return ctx.Err()
	}
	for _, f := range setup {
		f(c)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { a.done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-a.done
		for _, e := range logs.All() {
			line := fmt.Sprint(e.Message, e.ContextMap())
			if strings.Contains(line, testToken) || strings.Contains(line, "secretpart") {
				t.Errorf("the token reached the logs: %s", line)
			}
		}
	})
	return a
}

// result waits for Run to return.
func (a *agent) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-a.done:
		a.done <- err // for the cleanup
		return err
	case <-agentpeer.WaitCtx(t).Done():
		t.Fatal("Run did not return")
		return nil
	}
}

func (a *agent) waitFor(t *testing.T, what string, cond func(State) bool) State {
	t.Helper()
	s, err := a.Wait(agentpeer.WaitCtx(t), cond)
	if err != nil {
		t.Fatalf("waiting for %s: %v; state %+v", what, err, s)
	}
	return s
}

// TestConnectBindStop: the handshake carries the token and the subprotocol, the Hello
// announces the agent, every tunnel is bound as configured, and stop ends Run with nil after
// answering.
func TestConnectBindStop(t *testing.T) {
	p := agentpeer.New(t, testToken)
	tunnels := []TunnelConfig{
		webTunnel,
		{Proto: "tcp", Addr: "1.tcp.warren.test:20001", ForwardsTo: "localhost:22"},
		{Proto: "http", Labels: map[string]string{"app": "shop", "env": "prod"}, ForwardsTo: "http://localhost:9000", Bindings: []string{"internal"}},
	}
	a := startAgent(t, p, Config{AgentVersion: "1.2.3", OS: "plan9", Metadata: `{"host":"a"}`, Region: "eu", Tunnels: tunnels})
	pc := p.Accept(t)
	if got := pc.Req.Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization %q", got)
	}
	if got := pc.WS.Subprotocol(); got != agentproto.SubprotocolV2 {
		t.Errorf("subprotocol %q", got)
	}
	if got := pc.Req.Header.Get("User-Agent"); got != "warren-agent/1.2.3" {
		t.Errorf("User-Agent %q", got)
	}

	hello := pc.Read(t)
	want := agentproto.Message{Type: agentproto.TypeHello, ID: "hello", AgentVersion: "1.2.3", OS: "plan9", Metadata: `{"host":"a"}`, Region: "eu"}
	if fmt.Sprint(hello) != fmt.Sprint(want) {
		t.Errorf("hello %+v, want %+v", hello, want)
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: "ts_one", HeartbeatMillis: 3_600_000})
	a.waitFor(t, "the session", func(s State) bool { return s.SessionID == "ts_one" })

	ids := map[string]bool{}
	var binds []agentproto.Message
	for range tunnels {
		b := pc.Read(t)
		if b.Type != agentproto.TypeBind || b.ID == "" || ids[b.ID] {
			t.Fatalf("bind %+v: wrong type or id", b)
		}
		ids[b.ID] = true
		binds = append(binds, b)
	}
	for i, tc := range tunnels {
		b := binds[i]
		if b.Proto != tc.Proto || b.Hostname != tc.Hostname || b.Addr != tc.Addr || !maps.Equal(b.Labels, tc.Labels) || b.ForwardsTo != tc.ForwardsTo || fmt.Sprint(b.Bindings) != fmt.Sprint(tc.Bindings) {
			t.Errorf("bind %d = %+v, want %+v", i, b, tc)
		}
	}
	if s := a.State(); s.Ready || len(s.Tunnels) != 0 {
		t.Errorf("ready before the binds were answered: %+v", s)
	}
	// Answered out of order: the agent matches answers by id.
	for i := len(binds) - 1; i >= 0; i-- {
		pc.Send(t, agentproto.Message{Type: agentproto.TypeBound, ID: binds[i].ID, TunnelID: fmt.Sprintf("tn_%d", i), EndpointID: fmt.Sprintf("ep_%d", i), URL: fmt.Sprintf("url%d", i)})
	}
	s := a.waitFor(t, "the binds", func(s State) bool { return s.Ready })
	if len(s.Tunnels) != 3 || len(s.Refused) != 0 || s.Sessions != 1 {
		t.Fatalf("state %+v", s)
	}
	for i, tn := range a.Tunnels() {
		if tn.ID != fmt.Sprintf("tn_%d", i) || tn.EndpointID != fmt.Sprintf("ep_%d", i) || tn.URL != fmt.Sprintf("url%d", i) || tn.Config.ForwardsTo != tunnels[i].ForwardsTo {
			t.Errorf("tunnel %d = %+v", i, tn)
		}
	}
	if a.SessionID() != "ts_one" {
		t.Errorf("SessionID %q", a.SessionID())
	}

	pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "cmd-1", Command: agentproto.CommandStop})
	res := pc.Read(t)
	if res.Type != agentproto.TypeCommandResult || res.ID != "cmd-1" || res.Error != "" || res.ErrorCode != "" {
		t.Errorf("stop answered %+v", res)
	}
	if code := pc.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v", code)
	}
	if err := a.result(t); err != nil {
		t.Errorf("Run after stop = %v, want nil", err)
	}
	if s := a.State(); s.SessionID != "" || s.Tunnels != nil {
		t.Errorf("state after stop %+v", s)
	}
	if len(a.backoffs()) != 0 || p.Handshakes() != 1 {
		t.Errorf("reconnected after stop: waits %v, handshakes %d", a.backoffs(), p.Handshakes())
	}
}

// TestRestartReconnectsAtOnce: restart is answered, the connection closed and a new one
// opened without a backoff; the new session's ID replaces the old one and the tunnels are
// bound again.
func TestRestartReconnectsAtOnce(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{Tunnels: []TunnelConfig{webTunnel}})
	pc := p.Accept(t)
	pc.Welcome(t, "ts_old", 1)
	a.waitFor(t, "the first session", func(s State) bool { return s.SessionID == "ts_old" && s.Ready })

	pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "r1", Command: agentproto.CommandRestart})
	if res := pc.Read(t); res.Type != agentproto.TypeCommandResult || res.ID != "r1" || res.Error != "" {
		t.Errorf("restart answered %+v", res)
	}
	if code := pc.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v", code)
	}
	pc2 := p.Accept(t)
	pc2.Welcome(t, "ts_new", 1)
	s := a.waitFor(t, "the new session", func(s State) bool { return s.SessionID == "ts_new" && s.Ready })
	if s.Sessions != 2 || len(s.Tunnels) != 1 || s.Tunnels[0].ID != "tn_ts_newa" {
		t.Errorf("state %+v", s)
	}
	if w := a.backoffs(); len(w) != 0 {
		t.Errorf("a restart waited %v", w)
	}
}

// TestUpdateAndUnknownCommands: update is answered with the no-update code and the session
// goes on, as it does after a command this agent does not know.
func TestUpdateAndUnknownCommands(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{})
	pc := p.Accept(t)
	pc.Welcome(t, "ts_u", 0)
	a.waitFor(t, "the session", func(s State) bool { return s.Ready })

	pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "u1", Command: agentproto.CommandUpdate})
	res := pc.Read(t)
	if res.Type != agentproto.TypeCommandResult || res.ID != "u1" || res.ErrorCode != "ERR_809" || !strings.Contains(res.Error, "no update is available") {
		t.Errorf("update answered %+v", res)
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "x1", Command: "reboot"})
	res = pc.Read(t)
	if res.Type != agentproto.TypeCommandResult || res.ID != "x1" || res.ErrorCode != "" || res.Error != `unknown command "reboot"` {
		t.Errorf("unknown command answered %+v", res)
	}
	// Still connected: a heartbeat is answered on the same connection.
	pc.Send(t, agentproto.Message{Type: agentproto.TypeHeartbeat, ID: "s-1"})
	if ack := pc.ReadAny(t); ack.Type != agentproto.TypeHeartbeatAck || ack.ID != "s-1" {
		t.Errorf("heartbeat answered %+v", ack)
	}
	if s := a.State(); s.SessionID != "ts_u" || s.Sessions != 1 {
		t.Errorf("state %+v", s)
	}
}

// TestHeartbeats: the agent sends heartbeats at the interval, answers the server's, and
// takes a server silent for three intervals for dead: it reconnects after a backoff.
func TestHeartbeats(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}, func(c *Client) { c.heartbeat = 20 * time.Millisecond })
	pc := p.Accept(t)
	hello := pc.Read(t)
	pc.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: "ts_hb", HeartbeatMillis: 1000})

	seen := map[string]bool{}
	for len(seen) < 2 {
		m := pc.ReadAny(t)
		if m.Type != agentproto.TypeHeartbeat || m.ID == "" || seen[m.ID] {
			t.Fatalf("message %+v, want a heartbeat with a new id", m)
		}
		seen[m.ID] = true
		pc.Send(t, agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID})
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeHeartbeat, ID: "srv-1"})
	for {
		m := pc.ReadAny(t)
		if m.Type == agentproto.TypeHeartbeatAck {
			if m.ID != "srv-1" {
				t.Fatalf("ack %+v", m)
			}
			break
		}
	}
	// From here the server says nothing: the agent drops the connection and comes back.
	pc2 := p.Accept(t)
	pc2.Welcome(t, "ts_hb2", 0)
	a.waitFor(t, "the new session", func(s State) bool { return s.SessionID == "ts_hb2" })
	if w := a.backoffs(); len(w) != 1 {
		t.Errorf("waits %v, want one backoff before reconnecting", w)
	}
	if a.logs.FilterMessage("disconnected; reconnecting").Filter(func(e observer.LoggedEntry) bool {
		return strings.Contains(fmt.Sprint(e.ContextMap()["error"]), "the server was silent for 60ms")
	}).Len() != 1 {
		t.Errorf("no log line says the server was silent: %v", a.logs.All())
	}
}

// TestReconnectBackoff: connections lost before a Welcome back off exponentially up to the
// cap, with jitter; a session that was opened resets the backoff.
func TestReconnectBackoff(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	for range 4 {
		pc := p.Accept(t)
		_ = pc.Read(t) // the hello, unanswered
		_ = pc.WS.CloseNow()
	}
	pc := p.Accept(t)
	pc.Welcome(t, "ts_b", 0)
	a.waitFor(t, "the session", func(s State) bool { return s.Ready })
	_ = pc.WS.CloseNow() // lost after a session: the backoff starts over
	p.Accept(t).Welcome(t, "ts_c", 0)
	a.waitFor(t, "the next session", func(s State) bool { return s.SessionID == "ts_c" })

	waits := a.backoffs()
	caps := []time.Duration{10, 20, 40, 40, 10} // ms: doubling, capped, reset after a session
	if len(waits) != len(caps) {
		t.Fatalf("waits %v, want %d", waits, len(caps))
	}
	for i, w := range waits {
		hi := caps[i] * time.Millisecond
		if w < hi/2 || w > hi {
			t.Errorf("wait %d = %s, want within [%s, %s]", i, w, hi/2, hi)
		}
	}
	if p.Handshakes() != 6 {
		t.Errorf("%d handshakes, want 6", p.Handshakes())
	}
}

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		n      int
		r      float64
		lo, hi time.Duration
		want   time.Duration
	}{
		{0, 0, time.Second, time.Minute, 500 * time.Millisecond},
		{0, 0.999999999, time.Second, time.Minute, time.Second - time.Nanosecond},
		{1, 0, time.Second, time.Minute, time.Second},
		{5, 0, time.Second, time.Minute, 16 * time.Second},
		{6, 0, time.Second, time.Minute, 30 * time.Second},
		{1000, 0, time.Second, time.Minute, 30 * time.Second},
		{3, 0, time.Second, time.Second, 500 * time.Millisecond},
	} {
		if got := backoff(tt.n, tt.lo, tt.hi, tt.r); got != tt.want {
			t.Errorf("backoff(%d, %s, %s, %v) = %s, want %s", tt.n, tt.lo, tt.hi, tt.r, got, tt.want)
		}
	}
}

// TestAuthRefusalIsFatal: a 403 at the handshake ends Run with the server's code, without a
// retry and without the token in the error.
func TestAuthRefusalIsFatal(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{Authtoken: "wrong_" + testToken})
	err := a.result(t)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.StatusCode != 403 || refused.ErrorCode != "ERR_203" || refused.Msg != "The authtoken is not valid." {
		t.Fatalf("Run = %#v", err)
	}
	if strings.Contains(err.Error(), "secretpart") {
		t.Errorf("the token is in the error: %v", err)
	}
	if p.Handshakes() != 1 || len(a.backoffs()) != 0 {
		t.Errorf("retried: %d handshakes, waits %v", p.Handshakes(), a.backoffs())
	}
}

// TestTurnedAwayBacksOff: a 429 at the handshake (the server's session limits) is retried,
// not fatal: the agent waits the server's Retry-After when it is longer than its own backoff
// (never beyond the cap), logs the code and message once per attempt, and connects once the
// server lets it in. A Hello answered with a session limit's code is retried the same way.
func TestTurnedAwayBacksOff(t *testing.T) {
	p := agentpeer.New(t, testToken)
	const msg = "Too many new agent sessions: at most 5 per 60 seconds per tunnel credential. Retry in 12 seconds."
	p.TurnAway(2, 429, agentproto.ErrSessionRate, msg, "12")
	p.TurnAway(1, 429, agentproto.ErrSessionRate, msg, "3600") // beyond the cap
	p.TurnAway(1, 503, "", "The server is shutting down.", "")
	a := startAgent(t, p, Config{MinBackoff: 10 * time.Millisecond, MaxBackoff: 30 * time.Second})
	pc := p.Accept(t)
	hello := pc.Read(t)
	pc.Send(t, agentproto.Message{Type: agentproto.TypeError, ID: hello.ID, ErrorCode: agentproto.ErrTooManySessions, Error: "Too many agent sessions"})
	p.Accept(t).Welcome(t, "ts_in", 0)
	a.waitFor(t, "the session", func(s State) bool { return s.SessionID == "ts_in" })

	waits := a.backoffs()
	// ms: Retry-After 12 s twice, then the cap, then the doubling backoff (80 ms at attempt
	// 4, 160 at 5) with its jitter.
	lo := []time.Duration{12000, 12000, 30000, 40, 80}
	hi := []time.Duration{12000, 12000, 30000, 80, 160}
	if len(waits) != len(lo) {
		t.Fatalf("waits %v, want %d", waits, len(lo))
	}
	for i, w := range waits {
		if w < lo[i]*time.Millisecond || w > hi[i]*time.Millisecond {
			t.Errorf("wait %d = %s, want within [%dms, %dms]", i, w, lo[i], hi[i])
		}
	}
	if p.Handshakes() != 6 {
		t.Errorf("%d handshakes, want 6", p.Handshakes())
	}
	var codes []string
	for _, e := range a.logs.FilterMessage("turned away by the server; retrying").All() {
		f := e.ContextMap()
		codes = append(codes, fmt.Sprint(f["status"], " ", f["error_code"]))
		if f["error_code"] == agentproto.ErrSessionRate && f["error"] != msg {
			t.Errorf("logged message %q", f["error"])
		}
	}
	if want := []string{"429 ERR_226", "429 ERR_226", "429 ERR_226", "503 ", "0 ERR_225"}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("logged %q, want %q", codes, want)
	}
}

// TestOtherHandshakeFailuresRetry: a server answering 404 (no agent endpoint) is retried.
func TestOtherHandshakeFailuresRetry(t *testing.T) {
	p := agentpeer.New(t, testToken)
	cfg := Config{MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	core, _ := observer.New(zapcore.DebugLevel)
	cfg.ServerURL, cfg.Authtoken, cfg.Logger = p.URL+"/elsewhere", testToken, zap.New(core)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	ctx, cancel := context.WithCancel(t.Context())
	c.sleep = func(context.Context, time.Duration) error {
		if attempts++; attempts == 3 {
			cancel()
		}
		return ctx.Err()
	}
	if err := c.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if p.Handshakes() != 3 {
		t.Errorf("%d handshakes, want 3", p.Handshakes())
	}
}

// TestHelloRefused: an Error in answer to the Hello ends Run.
func TestHelloRefused(t *testing.T) {
	p := agentpeer.New(t, testToken)
	a := startAgent(t, p, Config{})
	pc := p.Accept(t)
	hello := pc.Read(t)
	pc.Send(t, agentproto.Message{Type: agentproto.TypeError, ID: hello.ID, ErrorCode: "ERR_100", Error: "metadata too long"})
	if code := pc.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v", code)
	}
	var refused *RefusedError
	if err := a.result(t); !errors.As(err, &refused) || refused.ErrorCode != "ERR_100" || refused.Msg != "metadata too long" || refused.StatusCode != 0 {
		t.Errorf("Run = %#v", err)
	}
}

// TestBindRefused: a refused bind in the first session ends Run with the refusals; after a
// restart, a refused bind makes the agent reconnect after a backoff and bind again.
func TestBindRefused(t *testing.T) {
	refuse := func(pc *agentpeer.Conn, t *testing.T) {
		b := pc.Read(t)
		pc.Send(t, agentproto.Message{Type: agentproto.TypeError, ID: b.ID, ErrorCode: "ERR_7117", Error: "the domain is not reserved"})
	}
	labeled := TunnelConfig{Proto: "https", Labels: map[string]string{"a": "b"}, ForwardsTo: "http://localhost:1"}

	t.Run("first session", func(t *testing.T) {
		p := agentpeer.New(t, testToken)
		a := startAgent(t, p, Config{Tunnels: []TunnelConfig{labeled, webTunnel}})
		pc := p.Accept(t)
		hello := pc.Read(t)
		pc.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: "ts_r", HeartbeatMillis: 3_600_000})
		b := pc.Read(t)
		pc.Send(t, agentproto.Message{Type: agentproto.TypeBound, ID: b.ID, TunnelID: "tn_1"})
		refuse(pc, t)
		if code := pc.Closed(t); code != websocket.StatusNormalClosure {
			t.Errorf("close status %v", code)
		}
		err := a.result(t)
		var be *BindError
		if !errors.As(err, &be) || len(be.Refused) != 1 || be.Refused[0].ErrorCode != "ERR_7117" || be.Refused[0].Config.Hostname != "app.example.com" {
			t.Fatalf("Run = %#v", err)
		}
		if !strings.Contains(err.Error(), "https app.example.com: ERR_7117: the domain is not reserved") {
			t.Errorf("error text %q", err)
		}
		if a.logs.FilterMessage("tunnel refused").FilterField(zap.String("error_code", "ERR_7117")).Len() != 1 {
			t.Errorf("the refusal was not logged: %v", a.logs.All())
		}
	})

	t.Run("after a restart", func(t *testing.T) {
		p := agentpeer.New(t, testToken)
		a := startAgent(t, p, Config{Tunnels: []TunnelConfig{webTunnel}, MinBackoff: 10 * time.Millisecond, MaxBackoff: time.Second})
		pc := p.Accept(t)
		pc.Welcome(t, "ts_1", 1)
		a.waitFor(t, "the first session", func(s State) bool { return s.Ready })
		pc.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "r", Command: agentproto.CommandRestart})
		_ = pc.Read(t)
		_ = pc.Closed(t)
		pc2 := p.Accept(t)
		hello := pc2.Read(t)
		pc2.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: "ts_2", HeartbeatMillis: 3_600_000})
		refuse(pc2, t)
		if code := pc2.Closed(t); code != websocket.StatusNormalClosure {
			t.Errorf("close status %v", code)
		}
		// Refused again: the wait grows as for a connection that failed.
		pc3 := p.Accept(t)
		hello = pc3.Read(t)
		pc3.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: "ts_3", HeartbeatMillis: 3_600_000})
		refuse(pc3, t)
		_ = pc3.Closed(t)
		pc4 := p.Accept(t)
		pc4.Welcome(t, "ts_4", 1)
		s := a.waitFor(t, "the fourth session", func(s State) bool { return s.SessionID == "ts_4" && s.Ready })
		if len(s.Tunnels) != 1 || len(s.Refused) != 0 {
			t.Errorf("state %+v", s)
		}
		if w := a.backoffs(); len(w) != 2 || w[0] > 10*time.Millisecond || w[1] < 10*time.Millisecond {
			t.Errorf("waits %v, want one within 10ms then one within [10ms, 20ms]", w)
		}
	})
}

// TestCancelClosesCleanly: when ctx ends the agent closes the connection normally.
func TestCancelClosesCleanly(t *testing.T) {
	p := agentpeer.New(t, testToken)
	cfg := Config{ServerURL: p.URL, Authtoken: testToken}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	pc := p.Accept(t)
	pc.Welcome(t, "ts_c", 0)
	if _, err := c.Wait(agentpeer.WaitCtx(t), func(s State) bool { return s.Ready }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := pc.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v", code)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v", err)
	}
	if err := c.Run(t.Context()); err == nil {
		t.Error("a second Run was accepted")
	}
}

// TestOtherSubprotocolIsFatal: a server that does not choose this protocol's version is
// another version of Warren; retrying would not help.
func TestOtherSubprotocolIsFatal(t *testing.T) {
	p := agentpeer.New(t, testToken)
	p.RefuseSubprotocol()
	a := startAgent(t, p, Config{})
	if code := p.Accept(t).Closed(t); code != websocket.StatusProtocolError {
		t.Errorf("close status %v", code)
	}
	if err := a.result(t); err == nil || !strings.Contains(err.Error(), "does not speak warren-agent.v2") {
		t.Errorf("Run = %v", err)
	}
}

func TestNewChecksTheConfig(t *testing.T) {
	ok := Config{ServerURL: "http://127.0.0.1:8080", Authtoken: "t"}
	for _, tt := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no server", func(c *Config) { c.ServerURL = "" }, "is not an http:// or https:// URL"},
		{"ftp", func(c *Config) { c.ServerURL = "ftp://x" }, "is not an http:// or https:// URL"},
		{"userinfo", func(c *Config) { c.ServerURL = "https://u:pw@x" }, "may hold no user"},
		{"no token", func(c *Config) { c.Authtoken = "" }, "the authtoken is empty"},
		{"backoff", func(c *Config) { c.MinBackoff, c.MaxBackoff = time.Second, time.Millisecond }, "shorter than"},
		{"proto", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "udp", Hostname: "a", ForwardsTo: "x"}} }, `tunnel 1: proto "udp" is not one of http, https, tcp, tls`},
		{"nothing", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "http", ForwardsTo: "x"}} }, "exactly one of"},
		{"two", func(c *Config) {
			c.Tunnels = []TunnelConfig{{Proto: "http", Hostname: "a", Labels: map[string]string{"a": "b"}, ForwardsTo: "x"}}
		}, "exactly one of"},
		{"tcp hostname", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "tcp", Hostname: "a", ForwardsTo: "x"}} }, "binds an address"},
		{"http addr", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "http", Addr: "a:1", ForwardsTo: "x"}} }, "with proto tcp"},
		{"bad addr", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "tcp", Addr: "a", ForwardsTo: "x"}} }, "is not host:port"},
		{"no forwards_to", func(c *Config) { c.Tunnels = []TunnelConfig{{Proto: "https", Hostname: "a"}} }, "forwards_to is empty"},
		{"label", func(c *Config) {
			c.Tunnels = []TunnelConfig{{Proto: "https", Labels: map[string]string{"a": "b=c"}, ForwardsTo: "x"}}
		}, "hold no '='"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("the password is in %v", err)
			}
		})
	}
	c, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.OS == "" || c.cfg.MinBackoff != DefaultMinBackoff || c.cfg.MaxBackoff != DefaultMaxBackoff {
		t.Errorf("defaults not filled: %+v", c.cfg)
	}
}

// TestStreamForAnUnboundTunnel: a visitor stream naming a tunnel the session did not bind
// is answered StreamRefused, naming the tunnel, and closed.
func TestStreamForAnUnboundTunnel(t *testing.T) {
	p := agentpeer.New(t, testToken)
	startAgent(t, p, Config{Tunnels: []TunnelConfig{webTunnel}})
	pc := p.Accept(t)
	pc.Welcome(t, "ts_one", 1)
	st := pc.OpenStream(t, agentproto.StreamHeader{TunnelID: "tn_other", Proto: "https", ClientAddr: netip.MustParseAddrPort("203.0.113.7:1"), Hostport: "app.example.com:443"})
	deadline, _ := agentpeer.WaitCtx(t).Deadline()
	_ = st.SetReadDeadline(deadline) // a hang guard
	if r, err := agentproto.ReadStreamResult(st); err != nil || r.Code != agentproto.StreamRefused || !strings.Contains(r.Reason, "no tunnel tn_other") {
		t.Fatalf("dial result %+v, %v; want refused naming tn_other", r, err)
	}
	if rest, err := io.ReadAll(st); err != nil || len(rest) != 0 {
		t.Fatalf("after the dial result: %q, %v; want the stream's end", rest, err)
	}
}

func TestConnectURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":          "ws://127.0.0.1:8080/agent/connect",
		"https://warren.example.com/":    "wss://warren.example.com/agent/connect",
		"https://warren.example.com/api": "wss://warren.example.com/api/agent/connect",
		"ws://h":                         "ws://h/agent/connect",
		"wss://h":                        "wss://h/agent/connect",
	} {
		if got, err := connectURL(in); got != want || err != nil {
			t.Errorf("connectURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
