// Package agentclient is Warren's agent: a client of the agent protocol v2
// (internal/agentproto) that opens a tunnel session, binds its tunnels, answers heartbeats
// and the session commands, accepts the server's visitor streams and forwards each to its
// tunnel's forwards_to, and reconnects when the connection is lost. The warren-agent
// command runs it; the server's tests use it as a real agent.
package agentclient

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// ErrCodeNoUpdate answers the update command. This agent has no update channel, so no
// update ever exists; details.md §5.3 has no "no update available" code, and ERR_809 ("the
// agent failed to update") is the catalogue's code for an update that did not happen (§6.12:
// the update "fails when no update exists"). ERR_806 would say the agent does not support
// the command, but it does: it answers it.
const ErrCodeNoUpdate = "ERR_809"

// Silence is how many heartbeat intervals without a message from the server make the agent
// take the connection for dead (agentproto: three).
const Silence = 3

// State is what the agent holds now.
type State struct {
	// SessionID is the current session's ID, "" while not connected.
	SessionID string
	// Sessions counts the sessions opened through the server URL since Run started; a
	// restart opens a new one.
	Sessions int
	// Ready: the server answered every bind of the current session.
	Ready bool
	// Tunnels are the current session's bound tunnels, in the configured order.
	Tunnels []Tunnel
	// Refused are the binds of the current session that the server refused.
	Refused []Refusal
	// Connections are the sessions held now, one per replica, the one through the server
	// URL first (Config.Connections).
	Connections []Connection
}

// Connection is a session the agent holds on one replica.
type Connection struct {
	// Replica is the server replica holding the session (its Welcome's).
	Replica   string
	SessionID string
	// Ready: the server answered every bind of the session.
	Ready bool
	// slot is which of Config.Connections the session is (0: through the server URL).
	slot int
}

// Tunnel is a bound tunnel.
type Tunnel struct {
	Config     TunnelConfig
	ID         string // tn_…
	EndpointID string // ep_…
	URL        string // "" for a labeled tunnel
}

// Refusal is a bind the server refused.
type Refusal struct {
	Config    TunnelConfig
	ErrorCode string // the catalogue code, when the server gave one
	Error     string
}

// RefusedError: the server refused the agent itself, at the handshake (401 or 403: a wrong,
// revoked or deleted token) or in answer to its Hello. Run does not retry it.
type RefusedError struct {
	StatusCode int // the handshake's HTTP status; 0 when the Hello was refused
	ErrorCode  string
	Msg        string
}

func (e *RefusedError) Error() string {
	return describeRefusal("the server refused the agent", e.StatusCode, e.ErrorCode, e.Msg)
}

// describeRefusal is what a refusal of the agent says: what happened, then the handshake's
// status, the error code and the message, each when there is one.
func describeRefusal(what string, status int, code, msg string) string {
	var b strings.Builder
	b.WriteString(what)
	if status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", status)
	}
	if code != "" {
		b.WriteString(": " + code)
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// HandshakeError: the server turned the agent away for now: an HTTP error other than 401 and
// 403 at the WebSocket handshake (429 when the credential or its account started or holds
// too many sessions, 503 while the server shuts down), or an Error answering the Hello with
// one of the codes that mean "not now" (agentproto.ErrTooManySessions, ErrSessionRate). Run
// retries it after its backoff, or after RetryAfter when that is longer (up to MaxBackoff).
type HandshakeError struct {
	StatusCode int // the handshake's HTTP status; 0 when the Hello was refused
	ErrorCode  string
	Msg        string
	RetryAfter time.Duration // the server's Retry-After; 0 when it named none
}

func (e *HandshakeError) Error() string {
	return describeRefusal("the server turned the agent away", e.StatusCode, e.ErrorCode, e.Msg)
}

// BindError: the server refused binds. In the first session it ends Run (the configuration
// or the credential's ACL is wrong); in a later one the agent reconnects with backoff, since
// the server may still hold the hostname for the session the agent just lost.
type BindError struct{ Refused []Refusal }

func (e *BindError) Error() string {
	parts := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		what := r.Config.Hostname + r.Config.Addr
		if what == "" {
			what = fmt.Sprint(r.Config.Labels)
		}
		parts[i] = fmt.Sprintf("%s %s: %s", r.Config.Proto, what, strings.TrimPrefix(r.ErrorCode+": "+r.Error, ": "))
	}
	return "the server refused the tunnels: " + strings.Join(parts, "; ")
}

// Client is one agent. Run it once; read its state from any goroutine.
type Client struct {
	cfg       Config
	forwarder *Forwarder // carries each visitor stream to its tunnel's app
	dialURL   string
	log       *zap.Logger
	ran       atomic.Bool
	// instance names this agent in the Hello of each of its sessions when it keeps several,
	// so that the tunnels it binds on several replicas share their hostnames and addresses;
	// "" with one session, which then binds as an agent always did.
	instance string

	mu      sync.Mutex
	state   State
	changed chan struct{} // closed and replaced on every change of state
	// replicas are the replicas the servers last listed (Welcome, heartbeats); dialing are
	// those that the extra connections are dialing, by slot.
	replicas []agentproto.Replica
	dialing  map[int]string
	// yield is closed to make extra session n leave its replica, which the first session,
	// reconnected through the server URL, reached too.
	yield map[int]chan struct{}

	// Tests replace these: the wait between attempts, and the heartbeat interval the
	// server's Welcome names (milliseconds on the wire).
	sleep     func(ctx context.Context, d time.Duration) error
	heartbeat time.Duration
}

// New checks cfg and returns an agent that has not connected yet.
func New(cfg Config) (*Client, error) {
	cfg, dialURL, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	forwarder, err := NewForwarder(cfg.Forward)
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:       cfg,
		forwarder: forwarder,
		dialURL:   dialURL,
		log:       cfg.Logger.With(zap.String("server", dialURL)),
		changed:   make(chan struct{}),
		dialing:   map[int]string{},
		yield:     map[int]chan struct{}{},
		sleep:     sleep,
	}
	if cfg.Connections > 1 {
		c.instance = crand.Text()
	}
	return c, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns a copy of the agent's state.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.clone()
}

// SessionID is the current session's ID, "" while not connected.
func (c *Client) SessionID() string { return c.State().SessionID }

// Tunnels are the current session's bound tunnels.
func (c *Client) Tunnels() []Tunnel { return c.State().Tunnels }

// Wait returns the first state that cond accepts, the current one included, or ctx's error.
func (c *Client) Wait(ctx context.Context, cond func(State) bool) (State, error) {
	for {
		c.mu.Lock()
		s, changed := c.state.clone(), c.changed
		c.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

func (s State) clone() State {
	s.Tunnels, s.Refused, s.Connections = slices.Clone(s.Tunnels), slices.Clone(s.Refused), slices.Clone(s.Connections)
	return s
}

// setConnection records the session of slot (nil: it holds none), in slot order.
func (s *State) setConnection(slot int, c *Connection) {
	s.Connections = slices.DeleteFunc(s.Connections, func(x Connection) bool { return x.slot == slot })
	if c != nil {
		c.slot = slot
		s.Connections = append(s.Connections, *c)
		slices.SortFunc(s.Connections, func(a, b Connection) int { return cmp.Compare(a.slot, b.slot) })
	}
}

func (c *Client) update(f func(*State)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.state)
	close(c.changed)
	c.changed = make(chan struct{})
}

// How a session ended.
type outcome int

const (
	lost    outcome = iota // the connection broke: reconnect after a backoff
	restart                // the server said restart: reconnect at once
	stopped                // the server said stop: Run returns nil
	fatal                  // the server refused the agent: Run returns the error
	ended                  // ctx ended
)

// Run connects and stays connected until the server stops the agent (nil), ctx ends (ctx's
// error) or the server refuses the agent (a *RefusedError, or a *BindError in the first
// session). Any other failure (refused connection, dropped connection, silent server, a
// *HandshakeError) is retried with capped exponential backoff and jitter, waiting at least
// the server's Retry-After; a restart command reconnects at once.
func (c *Client) Run(ctx context.Context) error {
	if c.ran.Swap(true) {
		return errors.New("agentclient: Run called twice")
	}
	// The extra connections end with Run; a stop command on any of them stops the agent.
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	var extras sync.WaitGroup
	defer extras.Wait()
	defer cancel(nil)
	for n := 1; n < c.cfg.Connections; n++ {
		extras.Go(func() {
			if c.keepExtra(ctx, n) {
				cancel(errStopped)
			}
		})
	}
	first := slot{url: c.dialURL, log: c.log}
	attempt := 0
	for {
		out, welcomed, err := c.session(ctx, first)
		c.update(func(s *State) {
			s.SessionID, s.Ready, s.Tunnels, s.Refused = "", false, nil, nil
			s.setConnection(0, nil)
		})
		if out == ended && errors.Is(context.Cause(ctx), errStopped) {
			out = stopped
		}
		switch out {
		case stopped:
			c.log.Info("stopped by the server")
			return nil
		case ended:
			return parent.Err()
		case fatal:
			c.log.Error("refused by the server", zap.Error(err))
			return err
		case restart:
			c.log.Info("restarting at the server's request")
			attempt = 0
			continue
		}
		if welcomed {
			attempt = 0
		}
		wait := backoff(attempt, c.cfg.MinBackoff, c.cfg.MaxBackoff, rand.Float64())
		attempt++
		var turnedAway *HandshakeError
		if errors.As(err, &turnedAway) {
			// The server's wait, if longer, but never beyond the cap: the server's limits
			// refill within a minute, and an agent must come back.
			wait = max(wait, min(turnedAway.RetryAfter, c.cfg.MaxBackoff))
			c.log.Warn("turned away by the server; retrying", zap.Int("status", turnedAway.StatusCode), zap.String("error_code", turnedAway.ErrorCode),
				zap.String("error", turnedAway.Msg), zap.Duration("in", wait), zap.Int("attempt", attempt))
		} else {
			c.log.Warn("disconnected; reconnecting", zap.Error(err), zap.Duration("in", wait), zap.Int("attempt", attempt))
		}
		if c.sleep(ctx, wait) != nil {
			if errors.Is(context.Cause(ctx), errStopped) {
				c.log.Info("stopped by the server")
				return nil
			}
			return parent.Err()
		}
	}
}

// errStopped ends Run's context when the server stops the agent through an extra session.
var errStopped = errors.New("stopped by the server")

// slot is one of the sessions the agent keeps (Config.Connections): the first dials the
// server URL, the others (n > 0) the address of a replica that holds no session of theirs.
type slot struct {
	n   int
	url string
	log *zap.Logger
}

// keepExtra keeps extra session n on a replica that no other session of the agent holds,
// whenever the servers list one (agentproto.Replica), until ctx ends; it reports whether
// the server stopped the agent. Nothing it meets ends the agent: the first session alone
// says whether the agent is refused.
func (c *Client) keepExtra(ctx context.Context, n int) (stoppedByServer bool) {
	attempt, avoid := 0, ""
	for {
		r, changed, ok := c.pick(n, avoid)
		if !ok {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return false
			}
		}
		sl := slot{n: n, log: c.cfg.Logger.With(zap.String("server", r.URL), zap.String("replica", r.ID))}
		var out outcome
		var welcomed bool
		var err error
		if sl.url, err = connectURL(r.URL); err == nil {
			out, welcomed, err = c.session(ctx, sl)
		}
		c.update(func(s *State) {
			s.setConnection(n, nil)
			delete(c.dialing, n)
			delete(c.yield, n)
		})
		switch out {
		case stopped:
			return true
		case ended:
			return false
		case restart:
			attempt = 0
			continue
		}
		avoid = r.ID // another listed replica first, if there is one
		if welcomed {
			attempt = 0
		}
		wait := backoff(attempt, c.cfg.MinBackoff, c.cfg.MaxBackoff, rand.Float64())
		attempt++
		sl.log.Warn("extra connection lost; reconnecting", zap.Error(err), zap.Duration("in", wait), zap.Int("attempt", attempt))
		if c.sleep(ctx, wait) != nil {
			return false
		}
	}
}

// pick chooses the replica extra session n dials: a listed one that no other session holds
// or dials, other than avoid if it can; else it returns a channel closed at the next change.
func (c *Client) pick(n int, avoid string) (agentproto.Replica, <-chan struct{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found *agentproto.Replica
	for _, r := range c.replicas {
		if c.taken(r.ID, n) {
			continue
		}
		if found == nil || found.ID == avoid {
			found = &r
		}
	}
	if found == nil {
		return agentproto.Replica{}, c.changed, false
	}
	c.dialing[n] = found.ID
	return *found, nil, true
}

// taken says a session other than slot n's holds or dials replica; c.mu is held.
func (c *Client) taken(replica string, n int) bool {
	for _, x := range c.state.Connections {
		if x.slot != n && x.Replica == replica {
			return true
		}
	}
	for m, id := range c.dialing {
		if m != n && id == replica {
			return true
		}
	}
	return false
}

// noteReplicas records the replicas a server listed, for the extra sessions to pick from.
func (c *Client) noteReplicas(replicas []agentproto.Replica) {
	if c.cfg.Connections < 2 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Equal(c.replicas, replicas) {
		return
	}
	c.replicas = slices.Clone(replicas)
	close(c.changed)
	c.changed = make(chan struct{})
}

// backoff is the wait before reconnection attempt n (from 0): MinBackoff doubled n times,
// capped at MaxBackoff, of which a random half (r in [0,1)) is dropped so that agents cut
// off together do not come back together.
func backoff(n int, lo, hi time.Duration, r float64) time.Duration {
	d := lo
	for range n {
		if d >= hi/2 {
			d = hi
			break
		}
		d *= 2
	}
	d = min(d, hi)
	return d/2 + time.Duration(r*float64(d/2))
}

// conn is one connection: a reader goroutine feeds msgs from the control stream; every
// write happens on Run's goroutine.
type conn struct {
	ws      *websocket.Conn
	ctl     *agentproto.ControlConn
	msgs    chan agentproto.Message
	readErr chan error
	timeout time.Duration

	mu    sync.Mutex
	bound map[string]TunnelConfig // by tunnel ID: where its visitor streams go
}

func (c *conn) write(m agentproto.Message) error {
	// Not Run's context: a cancelled write would drop the connection before the close
	// handshake.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	return c.ctl.Write(ctx, m)
}

// session runs one connection of sl from dial to end; welcomed says a session was opened.
func (c *Client) session(ctx context.Context, sl slot) (_ outcome, welcomed bool, _ error) {
	ws, err := c.dial(ctx, sl.url)
	if err != nil {
		var refused *RefusedError
		switch {
		case ctx.Err() != nil:
			return ended, false, ctx.Err()
		case errors.As(err, &refused):
			return fatal, false, err
		}
		return lost, false, err
	}
	defer ws.CloseNow()
	if got := ws.Subprotocol(); got != agentproto.SubprotocolV2 {
		_ = ws.Close(websocket.StatusProtocolError, "subprotocol")
		return fatal, false, fmt.Errorf("the server does not speak %s (it chose subprotocol %q)", agentproto.SubprotocolV2, got)
	}
	// The session's own context: its end (any return below) ends the multiplexer, the
	// accept loop and every visitor stream.
	// Deferred calls run last first: the multiplexer closes, then the streams' context ends
	// (a stream of a dead session reads io.EOF, which alone would look like a visitor's
	// half-close and leave the forwarder waiting on its app), then the streams are waited for.
	var streams sync.WaitGroup
	defer streams.Wait()
	readCtx, cancelRead := context.WithCancel(context.Background())
	defer cancelRead()
	// The heartbeat is not known before Welcome: the multiplexer pings at the default.
	mux, err := agentproto.NewAgentMux(readCtx, ws, agentproto.MuxOptions{Heartbeat: cmp.Or(c.heartbeat, DefaultHeartbeat), Log: sl.log})
	if err != nil {
		return fatal, false, err
	}
	defer mux.Close()
	ctl, err := mux.OpenControl()
	if err != nil {
		return lost, false, err
	}
	cn := &conn{ws: ws, ctl: ctl, msgs: make(chan agentproto.Message), readErr: make(chan error, 1), timeout: c.cfg.HandshakeTimeout, bound: map[string]TunnelConfig{}}
	streams.Add(1)
	go func() {
		defer streams.Done()
		c.acceptStreams(readCtx, mux, cn, &streams)
	}()
	go func() {
		for {
			m, err := ctl.Read(readCtx)
			if err != nil {
				cn.readErr <- err
				return
			}
			select {
			case cn.msgs <- m:
			case <-readCtx.Done():
				return
			}
		}
	}()

	welcome, out, err := c.hello(ctx, cn)
	if welcome == nil {
		return out, false, err
	}
	if sl.n > 0 && c.held(welcome.Replica, sl.n) {
		// The address led to a replica another session holds: no use holding two there.
		_ = ws.Close(websocket.StatusNormalClosure, "replica already held")
		return lost, false, fmt.Errorf("replica %s already holds a session of this agent", welcome.Replica)
	}
	return c.serve(ctx, cn, welcome, sl)
}

// held says a session other than slot n's holds or dials replica.
func (c *Client) held(replica string, n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taken(replica, n)
}

// dial opens the WebSocket; a 401 or 403 answer is a *RefusedError, another HTTP answer a
// *HandshakeError.
func (c *Client) dial(ctx context.Context, dialURL string) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HandshakeTimeout)
	defer cancel()
	header := http.Header{}
	header.Set("Authorization", "Bearer "+c.cfg.Authtoken)
	header.Set("User-Agent", "warren-agent/"+cmp.Or(c.cfg.AgentVersion, "dev"))
	ws, resp, err := websocket.Dial(ctx, dialURL, &websocket.DialOptions{
		HTTPClient:   c.cfg.HTTPClient,
		HTTPHeader:   header,
		Subprotocols: []string{agentproto.SubprotocolV2},
	})
	if err == nil {
		return ws, nil
	}
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return nil, errors.New(c.redact(err.Error()))
	}
	var body api.Error // the API's error body, when the server sent one
	if resp.Body != nil && json.NewDecoder(resp.Body).Decode(&body) == nil {
		body.Msg = c.redact(body.Msg)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, &RefusedError{StatusCode: resp.StatusCode, ErrorCode: body.ErrorCode, Msg: body.Msg}
	}
	return nil, &HandshakeError{StatusCode: resp.StatusCode, ErrorCode: body.ErrorCode, Msg: body.Msg, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
}

// retryAfter reads a Retry-After header: whole seconds (what Warren sends) or an HTTP date;
// 0 when absent or unreadable.
func retryAfter(v string) time.Duration {
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// redact keeps the token out of any text the server sent back.
func (c *Client) redact(s string) string {
	return strings.ReplaceAll(s, c.cfg.Authtoken, "[redacted]")
}

// hello announces the agent and waits for Welcome; it answers heartbeats meanwhile.
func (c *Client) hello(ctx context.Context, cn *conn) (*agentproto.Message, outcome, error) {
	err := cn.write(agentproto.Message{
		Type: agentproto.TypeHello, ID: "hello",
		AgentVersion: cmp.Or(c.cfg.AgentVersion, "dev"), OS: c.cfg.OS, Metadata: c.cfg.Metadata, Region: c.cfg.Region,
		Instance: c.instance,
	})
	if err != nil {
		return nil, lost, err
	}
	timeout := time.NewTimer(c.cfg.HandshakeTimeout)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = cn.ws.Close(websocket.StatusNormalClosure, "agent stopping")
			return nil, ended, ctx.Err()
		case err := <-cn.readErr:
			return nil, lost, err
		case <-timeout.C:
			return nil, lost, fmt.Errorf("no welcome within %s", c.cfg.HandshakeTimeout)
		case m := <-cn.msgs:
			switch m.Type {
			case agentproto.TypeWelcome:
				if m.SessionID == "" {
					return nil, lost, errors.New("the welcome has no session_id")
				}
				return &m, 0, nil
			case agentproto.TypeError:
				_ = cn.ws.Close(websocket.StatusNormalClosure, "refused")
				if m.ErrorCode == agentproto.ErrTooManySessions || m.ErrorCode == agentproto.ErrSessionRate {
					return nil, lost, &HandshakeError{ErrorCode: m.ErrorCode, Msg: c.redact(m.Error)}
				}
				return nil, fatal, &RefusedError{ErrorCode: m.ErrorCode, Msg: c.redact(m.Error)}
			case agentproto.TypeHeartbeat:
				if err := cn.write(agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID}); err != nil {
					return nil, lost, err
				}
			}
		}
	}
}

// serve binds the tunnels, then keeps the session: heartbeats both ways, bind answers and
// commands.
func (c *Client) serve(ctx context.Context, cn *conn, welcome *agentproto.Message, sl slot) (outcome, bool, error) {
	sessionID := welcome.SessionID
	log := sl.log.With(zap.String("session_id", sessionID))
	first := false
	held := Connection{Replica: welcome.Replica, SessionID: sessionID, Ready: len(c.cfg.Tunnels) == 0}
	var yield chan struct{} // nil for the first session, which never yields
	c.update(func(s *State) {
		if sl.n == 0 {
			s.Sessions++
			first = s.Sessions == 1
			s.SessionID, s.Ready = sessionID, held.Ready
			for _, x := range s.Connections {
				if ch := c.yield[x.slot]; x.slot > 0 && x.Replica == held.Replica && ch != nil {
					close(ch)
					delete(c.yield, x.slot)
				}
			}
		} else {
			yield = make(chan struct{})
			c.yield[sl.n] = yield
		}
		s.setConnection(sl.n, &held)
	})
	// Once the session counts as held, so that no extra session picks its replica.
	c.noteReplicas(welcome.Replicas)
	interval := time.Duration(welcome.HeartbeatMillis) * time.Millisecond
	if interval <= 0 {
		interval = DefaultHeartbeat
	}
	if c.heartbeat > 0 {
		interval = c.heartbeat
	}
	log.Info("connected", zap.Duration("heartbeat", interval))

	// Binds are answered in the loop below, so that heartbeats and commands go on meanwhile.
	pending := map[string]int{}
	for i, t := range c.cfg.Tunnels {
		id := "bind-" + strconv.Itoa(i+1)
		pending[id] = i
		err := cn.write(agentproto.Message{
			Type: agentproto.TypeBind, ID: id, Proto: t.Proto, Hostname: t.Hostname, Addr: t.Addr,
			Labels: t.Labels, ForwardsTo: t.ForwardsTo, Bindings: t.Bindings,
		})
		if err != nil {
			return lost, true, err
		}
	}
	bound := make([]*Tunnel, len(c.cfg.Tunnels))
	var refused []Refusal

	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	silence := time.NewTimer(Silence * interval)
	defer silence.Stop()
	beats := 0
	for {
		select {
		case <-ctx.Done():
			_ = cn.ws.Close(websocket.StatusNormalClosure, "agent stopping")
			return ended, true, ctx.Err()
		case err := <-cn.readErr:
			return lost, true, err
		case <-yield:
			_ = cn.ws.Close(websocket.StatusNormalClosure, "replica held by another session")
			return lost, true, fmt.Errorf("the agent's first session reached replica %s too", held.Replica)
		case <-silence.C:
			_ = cn.ws.CloseNow()
			return lost, true, fmt.Errorf("the server was silent for %s", Silence*interval)
		case <-ticker.C:
			beats++
			if err := cn.write(agentproto.Message{Type: agentproto.TypeHeartbeat, ID: "hb-" + strconv.Itoa(beats)}); err != nil {
				return lost, true, err
			}
			continue
		case m := <-cn.msgs:
			silence.Reset(Silence * interval)
			switch m.Type {
			case agentproto.TypeHeartbeat:
				c.noteReplicas(m.Replicas)
				if err := cn.write(agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID}); err != nil {
					return lost, true, err
				}
			case agentproto.TypeHeartbeatAck:
			case agentproto.TypeBound, agentproto.TypeError:
				i, ok := pending[m.ID]
				if !ok {
					if m.Type == agentproto.TypeError {
						log.Error("the server reported an error", zap.String("error_code", m.ErrorCode), zap.String("error", c.redact(m.Error)))
					}
					continue
				}
				delete(pending, m.ID)
				t := c.cfg.Tunnels[i]
				if m.Type == agentproto.TypeBound {
					bound[i] = &Tunnel{Config: t, ID: m.TunnelID, EndpointID: m.EndpointID, URL: m.URL}
					cn.mu.Lock()
					cn.bound[m.TunnelID] = t
					cn.mu.Unlock()
					log.Info("tunnel bound", zap.String("tunnel_id", m.TunnelID), zap.String("endpoint_id", m.EndpointID), zap.String("url", m.URL), zap.String("forwards_to", t.ForwardsTo))
				} else {
					refused = append(refused, Refusal{Config: t, ErrorCode: m.ErrorCode, Error: c.redact(m.Error)})
					log.Error("tunnel refused", zap.String("proto", t.Proto), zap.String("hostname", t.Hostname), zap.String("addr", t.Addr), zap.Any("labels", t.Labels), zap.String("error_code", m.ErrorCode), zap.String("error", c.redact(m.Error)))
				}
				if len(pending) > 0 {
					continue
				}
				c.update(func(s *State) {
					held.Ready = true
					s.setConnection(sl.n, &held)
					if sl.n > 0 {
						return
					}
					s.Ready, s.Refused, s.Tunnels = true, slices.Clone(refused), nil
					for _, t := range bound {
						if t != nil {
							s.Tunnels = append(s.Tunnels, *t)
						}
					}
				})
				if len(refused) > 0 {
					_ = cn.ws.Close(websocket.StatusNormalClosure, "tunnels refused")
					if first {
						return fatal, true, &BindError{Refused: refused}
					}
					// Not counted as a session opened: a refusal that lasts backs off up to
					// the cap instead of retrying at the shortest wait.
					return lost, false, &BindError{Refused: refused}
				}
			case agentproto.TypeCommand:
				if out, done := c.command(cn, log, m); done {
					return out, true, nil
				}
			default:
				// A newer server's message: ignored, as the protocol's version allows.
				log.Debug("ignored a message", zap.String("type", m.Type))
			}
		}
	}
}

// command answers a Command; done says the session ends with out.
func (c *Client) command(cn *conn, log *zap.Logger, m agentproto.Message) (out outcome, done bool) {
	log = log.With(zap.String("command", m.Command))
	result := agentproto.Message{Type: agentproto.TypeCommandResult, ID: m.ID}
	switch m.Command {
	case agentproto.CommandRestart:
		out, done = restart, true
	case agentproto.CommandStop:
		out, done = stopped, true
	case agentproto.CommandUpdate:
		result.ErrorCode = ErrCodeNoUpdate
		result.Error = "no update is available: this agent has no update channel"
	default:
		result.Error = fmt.Sprintf("unknown command %q", m.Command)
	}
	log.Info("command received", zap.String("error_code", result.ErrorCode), zap.String("error", result.Error))
	if err := cn.write(result); err != nil {
		// The server learns nothing; a restart or stop still happens, anything else waits
		// for the broken connection to show.
		log.Warn("could not answer the command", zap.Error(err))
	}
	if done {
		_ = cn.ws.Close(websocket.StatusNormalClosure, m.Command)
	}
	return out, done
}
