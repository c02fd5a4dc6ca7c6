// Package agentplane is the agent plane (internal/agentproto): agents connect over a
// WebSocket with a tunnel credential's token, and each connection is a tunnel session stored
// beside its tunnels and endpoints, so that every replica lists them. The replica holding the
// socket owns the rows: it deletes them, in one transaction, when the socket closes or the
// agent falls silent, and it closes the socket when the session row disappears (its
// credential was deleted).
//
// The plane serves GET /agent/connect (Plane is its http.Handler) and gets what it needs of
// the API server (authentication, events, the store outage, rate limiters) through Host;
// it never imports the API server.
package agentplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// transport is the tunnel sessions' transport member (details.md §7.6: "<service>/v2").
const transport = "warren/v2"

// Options configure the agent plane.
type Options struct {
	// Heartbeat is how often the server and each agent must hear from each other; an agent
	// silent for three intervals is disconnected. 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// CommandTimeout bounds how long a session command waits for the agent's answer.
	// 0 means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// CommandPoll is how often a replica looks in the store for commands that another
	// replica received for its agents, and how often that replica looks for the answer.
	// 0 means DefaultCommandPoll.
	CommandPoll time.Duration
	// ReplicaLease is how long a replica's liveness lease lasts; the replica renews it every
	// Heartbeat, and any other replica ends the sessions of a replica whose lease ran out
	// (it died without closing them). 0 means three Heartbeat intervals.
	ReplicaLease time.Duration
	// CredentialSessionRate and AccountSessionRate are how many sessions one tunnel
	// credential, and all the credentials of one account, may start per minute, all at once
	// or spread out (429 ERR_226 at the handshake beyond). CredentialSessions and
	// AccountSessions cap the sessions they hold at once (429 ERR_225). 0 means the
	// Default… value; a negative value turns that limit off.
	CredentialSessionRate, AccountSessionRate int
	CredentialSessions, AccountSessions       int
	// Link is the address at which the other replicas reach this one's cluster link
	// (apiserver/cluster), recorded in its lease; "" when it has none. With a link, the plane
	// also reads the tunnels of the other replicas that have one, every RemoteRefresh (0
	// means DefaultRemoteRefresh).
	Link          string
	RemoteRefresh time.Duration
	// Advertise is the base URL at which agents reach this replica directly (not through
	// the load balancer), recorded in its lease; "" when they cannot. Welcome and the
	// heartbeats list the live replicas' addresses, so that an agent keeping several
	// sessions opens one on each.
	Advertise string
}

// Defaults of Options.
const (
	DefaultHeartbeat      = 10 * time.Second
	DefaultCommandTimeout = 10 * time.Second
	DefaultCommandPoll    = 250 * time.Millisecond
	// The session limits are far above what an ordinary deployment meets (an agent opens one
	// session and reconnects with backoff) and well below a flood (issue 16: one credential
	// opened 313 sessions per second). A fleet sharing one credential that restarts at once
	// is let in by the burst, then 10 per second per credential.
	DefaultCredentialSessionRate = 600  // per minute
	DefaultAccountSessionRate    = 3000 // per minute
	DefaultCredentialSessions    = 1000
	DefaultAccountSessions       = 5000
)

// Check rejects a lease that could run out between two renewals (one per heartbeat).
func (o Options) Check() error {
	o.setDefaults()
	if o.ReplicaLease <= o.Heartbeat {
		return fmt.Errorf("the agent replica lease %s must be longer than the agent heartbeat %s", o.ReplicaLease, o.Heartbeat)
	}
	if o.Advertise != "" {
		u, err := url.Parse(o.Advertise)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("the agent address %q is not an http:// or https:// base URL", o.Advertise)
		}
	}
	return nil
}

func (o *Options) setDefaults() {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.CommandPoll <= 0 {
		o.CommandPoll = DefaultCommandPoll
	}
	if o.ReplicaLease <= 0 {
		o.ReplicaLease = 3 * o.Heartbeat
	}
	if o.RemoteRefresh <= 0 {
		o.RemoteRefresh = DefaultRemoteRefresh
	}
	for _, l := range []struct {
		v   *int
		def int
	}{
		{&o.CredentialSessionRate, DefaultCredentialSessionRate}, {&o.AccountSessionRate, DefaultAccountSessionRate},
		{&o.CredentialSessions, DefaultCredentialSessions}, {&o.AccountSessions, DefaultAccountSessions},
	} {
		if *l.v == 0 {
			*l.v = l.def
		}
	}
}

// Host is what the plane gets from the API server that mounts it (apiserver/agentplane_host.go).
type Host struct {
	// Store is the API's store (with its logs and timings).
	Store store.Store
	Log   *zap.Logger
	Now   func() time.Time
	// Credential resolves an agent's Authorization header to its tunnel credential, in tx,
	// with the API's 403 codes (details.md §5.3).
	Credential func(ctx context.Context, tx store.Tx, r *http.Request) (*store.Object, error)
	// AccountEnabled refuses, in tx, an account whose agents may not connect (a disabled one),
	// checked again when the session starts.
	AccountEnabled func(ctx context.Context, tx store.Tx, accountID string) error
	// ClientIP is the agent's address, as the API sees a client's (trusted proxies).
	ClientIP func(r *http.Request) string
	// RequestLog is the logger of a request (its operation ID); WriteError answers it with
	// the API's error body.
	RequestLog func(r *http.Request) *zap.Logger
	WriteError func(w http.ResponseWriter, r *http.Request, err error)
	// SessionEvent writes a session's start or stop event in tx, when an event subscription
	// of the account names its type (the outbox wakes its worker once tx commits).
	SessionEvent func(ctx context.Context, tx store.Tx, accountID, eventType string, sess api.TunnelSession) error
	// StoreDown reports err when it says the store is unreachable (logged once per outage).
	StoreDown func(err error) bool
	// Limiter is a per-key token bucket of perMinute, scoped by scope (the API's limiter,
	// shared through the store by the replicas of a PostgreSQL database).
	Limiter func(scope string, perMinute int) Limiter
	// Metrics registers the plane's series (streams); nil registers none.
	Metrics prometheus.Registerer
}

// Limiter takes one from key's allowance: allowed, or the time until it would be.
type Limiter interface {
	Allow(ctx context.Context, key string, now time.Time) (allowed bool, retryAfter time.Duration, err error)
}

// sessionSecret is what the store keeps of a session beside its document: the replica that
// holds its socket.
type sessionSecret struct {
	Replica string `json:"replica"`
}

// Plane is this replica's connected agents: the handler of GET /agent/connect.
type Plane struct {
	host    Host
	opts    Options
	store   store.Store
	log     *zap.Logger
	limits  sessionLimits
	replica string // this process, as recorded in its sessions' rows
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// abandoned makes the plane stop as a crashed process would: its loops end and its
	// sockets close, but its rows and lease stay for the other replicas to sweep (tests).
	abandoned atomic.Bool

	mu    sync.Mutex
	conns map[string]*agentConn // by session ID

	// peers are the live replicas with an agent address, as the last sweep read them.
	peers atomic.Pointer[[]agentproto.Replica]

	tunnels *tunnelIndex  // the online tunnels of this replica (streams.go)
	remote  remoteTunnels // the online tunnels of the other replicas (remote.go)
	metrics *planeMetrics
}

// New takes this replica's lease and starts the plane's loops, until Close.
func New(ctx context.Context, opts Options, host Host) (*Plane, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	planeCtx, cancel := context.WithCancel(context.Background())
	h := &Plane{
		host: host, opts: opts, store: host.Store, log: host.Log, limits: newSessionLimits(opts, host.Limiter),
		replica: ids.New(ids.AgentReplica), ctx: planeCtx, cancel: cancel, conns: map[string]*agentConn{},
		tunnels: newTunnelIndex(),
	}
	h.metrics = newPlaneMetrics(h, host.Metrics)
	if _, err := h.renewLease(ctx); err != nil {
		cancel()
		return nil, err
	}
	if err := h.sweep(); err != nil { // the peers known from the start
		h.logStoreError(h.log, "agent replica leases", err)
	}
	h.wg.Add(2)
	go h.every(opts.CommandPoll, h.pollCommands)
	go h.every(opts.Heartbeat, h.tend)
	if opts.Link != "" {
		h.refreshRemote()
		h.wg.Add(1)
		go h.every(opts.RemoteRefresh, h.refreshRemote)
	}
	return h, nil
}

// Replica is this replica's ID, as its sessions' rows and leases record it.
func (h *Plane) Replica() string { return h.replica }

// Connected is the number of agents connected to this replica.
func (h *Plane) Connected() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Close disconnects every agent, deletes their sessions, then the lease, and waits for it.
func (h *Plane) Close() {
	h.cancel()
	h.wg.Wait()
	if h.abandoned.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.reapReplica(ctx, h.replica, true); err != nil {
		h.log.Error("agent replica lease", zap.Error(err))
	}
}

// Abandon stops the plane as if the process had died (tests): its loops end and its
// agents' sockets close, but their sessions and the replica's lease stay in the store for
// the other replicas to sweep.
func (h *Plane) Abandon() {
	h.abandoned.Store(true)
	h.cancel()
	h.wg.Wait()
}

func (h *Plane) get(sessionID string) *agentConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[sessionID]
}

// End closes the sockets of sessions whose rows are gone (a deleted credential), if this
// replica holds them; other replicas notice at their next heartbeat.
func (h *Plane) End(sessionIDs []string) {
	h.EndWith("the session's credential was deleted", sessionIDs)
}

// EndWith is End with the reason the agents read in the close frame.
func (h *Plane) EndWith(reason string, sessionIDs []string) {
	for _, id := range sessionIDs {
		if a := h.get(id); a != nil {
			a.close(websocket.StatusPolicyViolation, reason)
		}
	}
}

// logStoreError logs a failed store call of background work, unless it is the store's
// outage, which is logged once.
func (h *Plane) logStoreError(log *zap.Logger, msg string, err error, fields ...zap.Field) {
	if h.host.StoreDown(err) {
		return
	}
	log.Error(msg, append(fields, zap.Error(err))...)
}

// agentConn is one connected agent.
type agentConn struct {
	hub          *Plane
	ws           *websocket.Conn
	mux          *agentproto.ServerMux
	ctl          *agentproto.ControlConn // the control stream, once accepted
	log          *zap.Logger
	sessionID    string
	accountID    string
	credentialID string
	instance     string // the agent instance (Hello), "" for none
	region       string
	metadata     string
	lastHeard    atomic.Int64 // Unix ns of the last message from the agent
	done         chan struct{}
	closeOnce    sync.Once
	// ending: the socket is being closed; no stream is opened to it any more.
	ending atomic.Bool
	// streams is the number of visitor streams open to this agent.
	streams atomic.Int64

	// rowsGone: the session's rows were deleted by the read loop (endRows), which alone
	// touches it.
	rowsGone bool

	mu      sync.Mutex
	pending map[string]pendingCommand // by command ID
}

// pendingCommand is a command sent to the agent and not answered yet.
type pendingCommand struct {
	name   string
	answer chan agentproto.Message
}

// ServeHTTP serves GET /agent/connect: it authenticates the credential token, upgrades to a
// WebSocket and runs the session until the socket closes.
func (h *Plane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cred, err := h.credential(r)
	if err != nil {
		h.refuse(err)
		h.heldSessionsRetryAfter(w, err)
		h.host.WriteError(w, r, err)
		return
	}
	if msg := agentproto.SubprotocolRefusal(r.Header); msg != "" {
		// 426 Upgrade Required: the request is fine but for the protocol, which the agent
		// must be upgraded to speak; the Upgrade header names it (RFC 9110 §15.5.22).
		h.metrics.refused.WithLabelValues(refusedProtocol).Inc()
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Sec-WebSocket-Protocol", agentproto.SubprotocolV2)
		h.host.WriteError(w, r, apierr.WithDetail(apierr.New(http.StatusUpgradeRequired, "ERR_215", "%s", msg), "param", "Sec-WebSocket-Protocol"))
		return
	}
	h.wg.Add(1)
	defer h.wg.Done()
	if h.ctx.Err() != nil {
		h.metrics.refused.WithLabelValues(refusedUnavailable).Inc()
		h.host.WriteError(w, r, apierr.New(http.StatusServiceUnavailable, "", "The server is shutting down."))
		return
	}
	log := h.host.RequestLog(r)
	if err := h.takeSessionRate(r.Context(), w, log, cred); err != nil {
		h.refuse(err)
		h.host.WriteError(w, r, err)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{agentproto.SubprotocolV2}})
	if err != nil {
		return // Accept answered the request
	}
	// The plane's context bounds the connection: at shutdown its streams and socket end.
	mux, err := agentproto.NewServerMux(h.ctx, ws, agentproto.MuxOptions{Heartbeat: h.opts.Heartbeat, Log: log})
	if err != nil {
		log.Error("agent multiplexer", zap.Error(err))
		_ = ws.Close(websocket.StatusInternalError, "multiplexer")
		return
	}
	a := &agentConn{
		hub: h, ws: ws, mux: mux, credentialID: cred.ID, accountID: cred.AccountID,
		log:  log.With(zap.String("account_id", cred.AccountID), zap.String("credential_id", cred.ID)),
		done: make(chan struct{}), pending: map[string]pendingCommand{},
	}
	a.run(h.host.ClientIP(r))
}

// credential resolves the Authorization header of an agent to its tunnel credential, and
// refuses it while the credential or its account holds as many sessions as it may (checked
// again when the session starts): one read.
func (h *Plane) credential(r *http.Request) (*store.Object, error) {
	var cred *store.Object
	err := h.store.Read(r.Context(), func(tx store.Tx) (err error) {
		if cred, err = h.host.Credential(r.Context(), tx, r); err != nil {
			return err
		}
		return h.checkHeldSessions(r.Context(), tx, cred)
	})
	return cred, err
}

// run is the session: Hello, Welcome, then messages until the socket closes, the agent
// falls silent or the session row disappears. Its rows are deleted on the way out.
func (a *agentConn) run(ip string) {
	h := a.hub
	defer a.ws.CloseNow()
	defer a.mux.Close()
	a.lastHeard.Store(time.Now().UnixNano())
	helloCtx, cancel := context.WithTimeout(h.ctx, 3*h.opts.Heartbeat)
	defer cancel()
	ctl, err := a.mux.AcceptControl(helloCtx)
	if err != nil {
		return
	}
	a.ctl = ctl
	hello, err := a.read(helloCtx)
	cancel()
	if err != nil {
		return
	}
	if hello.Type != agentproto.TypeHello {
		h.metrics.refused.WithLabelValues(refusedProtocol).Inc()
		a.fail(hello.ID, "ERR_215", "The first message must be "+agentproto.TypeHello+".")
		return
	}
	if err := a.start(hello, ip); err != nil {
		h.refuse(err)
		code, msg := "ERR_215", "The session could not be started."
		var ae *api.Error
		var v *rules.Violation
		switch {
		case errors.As(err, &ae):
			code, msg = ae.ErrorCode, ae.Msg
		case errors.As(err, &v):
			code, msg = v.Code, v.Msg
		case h.host.StoreDown(err):
			// Not a refusal of the agent: closed so that it reconnects later.
			_ = a.ws.Close(websocket.StatusTryAgainLater, "store unavailable")
			return
		default:
			a.log.Error("agent session start", zap.Error(err))
		}
		a.fail(hello.ID, code, msg)
		return
	}
	a.log = a.log.With(zap.String("session_id", a.sessionID))
	h.mu.Lock()
	h.conns[a.sessionID] = a
	h.mu.Unlock()
	a.log.Info("agent connected", zap.String("ip", ip), zap.String("agent_version", hello.AgentVersion))
	defer a.finish()

	welcome := agentproto.Message{
		Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: a.sessionID, HeartbeatMillis: heartbeatMillis(h.opts.Heartbeat),
		Replica: h.replica, Replicas: h.Peers(),
	}
	if err := a.send(welcome); err != nil {
		return
	}
	for {
		m, err := a.read(h.ctx)
		if err != nil {
			return
		}
		a.handle(m)
	}
}

// heartbeatMillis is an interval in whole milliseconds on the wire, at least one: both sides
// then use the same interval.
func heartbeatMillis(d time.Duration) int {
	return max(1, int((d+time.Millisecond-1)/time.Millisecond))
}

// finish unregisters the connection and deletes its session, tunnels and endpoints.
func (a *agentConn) finish() {
	a.closeOnce.Do(func() { close(a.done) })
	h := a.hub
	a.ending.Store(true)
	h.tunnels.removeSession(a)
	h.mu.Lock()
	delete(h.conns, a.sessionID)
	h.mu.Unlock()
	if h.abandoned.Load() {
		return
	}
	a.endRows()
	a.log.Info("agent disconnected")
}

// endRows deletes the session, its tunnels and endpoints, once; the read loop calls it.
func (a *agentConn) endRows() {
	if a.rowsGone {
		return
	}
	h := a.hub
	// The hub's context may be cancelled (shutdown): the rows must go all the same.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := h.store.Write(ctx, func(tx store.Tx) error { return h.EndSession(ctx, tx, a.sessionID) })
	if err != nil {
		h.logStoreError(a.log, "agent session cleanup", err)
		return // finish tries again
	}
	a.rowsGone = true
	h.tunnels.removeSession(a)
}

// read reads one message of the control stream; any message proves the agent alive.
func (a *agentConn) read(ctx context.Context) (agentproto.Message, error) {
	m, err := a.ctl.Read(ctx)
	if errors.Is(err, agentproto.ErrMalformed) {
		// Not read with U+FFFD in place of bad bytes, nor guessed at: refused (ERR_213).
		a.fail("", "ERR_213", "A control message must be one JSON object of valid UTF-8, at most 1 MiB.")
		return m, fmt.Errorf("agent sent a malformed message: %w", err)
	}
	if err != nil {
		return m, err
	}
	a.lastHeard.Store(time.Now().UnixNano())
	return m, nil
}

// send writes one message, bounded by a heartbeat interval.
func (a *agentConn) send(m agentproto.Message) error {
	ctx, cancel := context.WithTimeout(a.hub.ctx, a.hub.opts.Heartbeat)
	defer cancel()
	return a.ctl.Write(ctx, m)
}

// fail sends an Error that ends the connection, then closes it.
func (a *agentConn) fail(id, code, msg string) {
	_ = a.send(agentproto.Message{Type: agentproto.TypeError, ID: id, ErrorCode: code, Error: msg})
	a.close(websocket.StatusPolicyViolation, msg)
}

// close closes the socket with a status; the read loop then ends and cleans up.
// The socket's close ends the multiplexer and with it every stream of the session at once.
func (a *agentConn) close(code websocket.StatusCode, reason string) {
	a.ending.Store(true)
	go func() {
		_ = a.ws.Close(code, rules.Clip(reason))
		_ = a.mux.Close()
	}()
}

// handle answers one message of a running session.
func (a *agentConn) handle(m agentproto.Message) {
	switch m.Type {
	case agentproto.TypeHeartbeat:
		_ = a.send(agentproto.Message{Type: agentproto.TypeHeartbeatAck, ID: m.ID})
	case agentproto.TypeHeartbeatAck:
	case agentproto.TypeBind:
		answer, err := a.bind(m)
		if err != nil {
			answer = a.errorMessage(m.ID, err)
		}
		_ = a.send(answer)
	case agentproto.TypeUnbind:
		if err := a.unbind(m); err != nil {
			_ = a.send(a.errorMessage(m.ID, err))
		}
	case agentproto.TypeCommandResult:
		a.mu.Lock()
		p, ok := a.pending[m.ID]
		delete(a.pending, m.ID)
		a.mu.Unlock()
		if !ok {
			return
		}
		if m.ErrorCode == "" && m.Error == "" && (p.name == agentproto.CommandRestart || p.name == agentproto.CommandStop) {
			// The agent closes the socket next and, after a restart, connects again at once
			// and binds the same hostnames: its old session's tunnels must be gone by then, or
			// the new binds are refused as taken (ERR_7119). Deleted here, before this loop
			// reads the agent's close and answers it, the rows are gone before the agent can
			// reconnect, and before the command's caller hears the answer. The session is
			// over: the socket closes whether or not the agent closes it.
			a.endRows()
			a.close(websocket.StatusNormalClosure, p.name)
		}
		p.answer <- m
	default:
		_ = a.send(agentproto.Message{Type: agentproto.TypeError, ID: m.ID, ErrorCode: "ERR_215", Error: "Unknown message type " + rules.Quote(m.Type) + "."})
	}
}

// errorMessage turns a refusal into the protocol's Error; unexpected errors are logged and
// sent without detail.
func (a *agentConn) errorMessage(id string, err error) agentproto.Message {
	m := agentproto.Message{Type: agentproto.TypeError, ID: id}
	var ae *api.Error
	var v *rules.Violation
	switch {
	case errors.As(err, &ae):
		m.ErrorCode, m.Error = ae.ErrorCode, ae.Msg
	case errors.As(err, &v):
		m.ErrorCode, m.Error = v.Code, v.Msg
	case a.hub.host.StoreDown(err):
		e := apierr.StoreUnavailable()
		m.ErrorCode, m.Error = e.ErrorCode, e.Msg
	default:
		a.log.Error("agent request", zap.Error(err))
		m.Error = "internal server error"
	}
	return m
}

// start stores the session named by Hello, with its start event, in one transaction; the
// credential must still exist.
func (a *agentConn) start(hello agentproto.Message, ip string) error {
	h := a.hub
	region := hello.Region
	if region == "" {
		region = rules.DefaultAddrRegion
	}
	if err := rules.DomainRegion(region); err != nil {
		return err
	}
	if err := rules.DescriptionMetadata(rules.CredentialText, nil, &hello.Metadata); err != nil {
		return err
	}
	if !validInstance(hello.Instance) {
		return apierr.WithDetail(apierr.BadRequest("ERR_215", "The instance must be at most %d characters of A-Z, a-z, 0-9, _ and -.", agentproto.MaxInstance), "param", "instance")
	}
	a.region, a.metadata, a.instance = region, hello.Metadata, hello.Instance
	sess := api.TunnelSession{
		ID: ids.New(ids.TunnelSession), AgentVersion: hello.AgentVersion, Credential: api.Ref{ID: a.credentialID},
		IP: ip, Metadata: hello.Metadata, OS: hello.OS, Region: region,
		StartedAt: api.FormatTime(h.host.Now()), Transport: transport,
	}
	doc, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	secret, _ := json.Marshal(sessionSecret{Replica: h.replica})
	ctx := h.ctx
	err = h.store.Write(ctx, func(tx store.Tx) error {
		cred, err := tx.Get(ctx, kinds.Credential, a.credentialID)
		if isNotFound(err) {
			return apierr.Forbidden("ERR_203", "The tunnel credential was revoked.")
		} else if err != nil {
			return err
		}
		// The checks before the upgrade read an earlier snapshot: sessions started since
		// count, and the account may have been disabled since.
		if err := h.host.AccountEnabled(ctx, tx, a.accountID); err != nil {
			return err
		}
		if err := h.checkHeldSessions(ctx, tx, cred); err != nil {
			return err
		}
		err = tx.Insert(ctx, &store.Object{Kind: kinds.TunnelSession, ID: sess.ID, AccountID: a.accountID, Doc: doc, Secret: secret, Refs: []string{a.credentialID, h.replica}})
		if err != nil {
			return err
		}
		return h.host.SessionEvent(ctx, tx, a.accountID, "agent_session_start.v0", sess)
	})
	if err != nil {
		return err
	}
	a.sessionID = sess.ID
	return nil
}

// validInstance says an agent instance name is short and plain ("" included).
func validInstance(s string) bool {
	return len(s) <= agentproto.MaxInstance && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == ""
}

// Peers are the live replicas that agents reach directly (Options.Advertise), this one
// included when it has an address, by ID.
func (h *Plane) Peers() []agentproto.Replica {
	if p := h.peers.Load(); p != nil {
		return *p
	}
	return nil
}

// EndSession deletes a session, its tunnels and their endpoints and writes its stop event,
// in tx. A session already gone is no error (its credential's deletion removed it). Its
// socket, if this replica holds it, closes at End or at the next heartbeat.
func (h *Plane) EndSession(ctx context.Context, tx store.Tx, sessionID string) error {
	o, err := tx.Get(ctx, kinds.TunnelSession, sessionID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	tunnels, err := tx.Referrers(ctx, sessionID)
	if err != nil {
		return err
	}
	for _, t := range tunnels {
		if err := deleteTunnel(ctx, tx, t); err != nil {
			return err
		}
	}
	if err := tx.Delete(ctx, kinds.TunnelSession, sessionID); err != nil {
		return err
	}
	var sess api.TunnelSession
	if err := json.Unmarshal(o.Doc, &sess); err != nil {
		return err
	}
	return h.host.SessionEvent(ctx, tx, o.AccountID, "agent_session_stop.v0", sess)
}

// deleteTunnel deletes a tunnel and its endpoint (the endpoint refers to the tunnel), and
// the AgentBind of its hostport once no other tunnel refers to it.
func deleteTunnel(ctx context.Context, tx store.Tx, t *store.Object) error {
	endpoints, err := tx.Referrers(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, e := range endpoints {
		if err := tx.Delete(ctx, e.Kind, e.ID); err != nil {
			return err
		}
	}
	if err := tx.Delete(ctx, kinds.Tunnel, t.ID); err != nil {
		return err
	}
	for _, ref := range t.Refs {
		if !strings.HasPrefix(ref, ids.AgentBind) {
			continue
		}
		if n, err := tx.CountReferrers(ctx, ref, kinds.Tunnel); err != nil || n > 0 {
			return err
		}
		if err := tx.Delete(ctx, kinds.AgentBind, ref); err != nil {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
