package agentplane

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// Streams to tunnels (protocol v2): the edge finds an online tunnel of this replica and opens
// a stream to it over its agent's connection, one per visitor connection. The plane keeps
// an index of the tunnels its agents bound, updated once each bind or unbind commits and
// when a session ends, so that the edge's lookups read memory, never the store.

// Errors of OpenStream, inside a *StreamError.
var (
	// ErrTunnelOffline: no agent connected to this replica holds the tunnel.
	ErrTunnelOffline = errors.New("the tunnel is not online in this replica")
	// ErrSessionEnded: the tunnel's agent session ended (or is ending) before the stream opened.
	ErrSessionEnded = errors.New("the tunnel's agent session ended")
	// ErrUpstreamUnreachable: the agent could not reach the tunnel's forwards_to.
	ErrUpstreamUnreachable = errors.New("the tunnel's agent could not reach its upstream")
	// ErrStreamRefused: the agent refused the stream (a tunnel it no longer holds, a header
	// it cannot read).
	ErrStreamRefused = errors.New("the tunnel's agent refused the stream")
)

// StreamError is why OpenStream opened no stream; errors.Is tells its Err.
type StreamError struct {
	TunnelID string
	Err      error // ErrTunnelOffline, ErrSessionEnded, ErrUpstreamUnreachable or ErrStreamRefused
	Cause    error // what the multiplexer or the agent said, if anything
}

func (e *StreamError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("agentplane: tunnel %s: %v: %v", e.TunnelID, e.Err, e.Cause)
	}
	return fmt.Sprintf("agentplane: tunnel %s: %v", e.TunnelID, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// Tunnel is an online tunnel, of this replica or (with a Link) of another, as the edge sees it.
type Tunnel struct {
	ID, AccountID, SessionID string
	Proto                    string // http, https, tcp, tls
	ForwardsTo               string
	// Labels of a labeled tunnel (tunnel-group backends select it); nil otherwise.
	Labels map[string]string
	// Hostport is the agent endpoint the tunnel bound ("app.example.com:443",
	// "1.tcp.example.com:20001"); "" for a labeled tunnel.
	Hostport string
	// Link is the cluster link address of the replica holding a tunnel of another replica
	// (remote.go); "" for a tunnel of this one.
	Link string
}

// tunnelIndex is the online tunnels of this replica.
type tunnelIndex struct {
	mu   sync.RWMutex
	byID map[string]heldTunnel
	// byEndpoint: endpointKey -> the IDs of the tunnels bound to it, oldest first: one
	// agent instance's sessions on this replica share it (kinds.AgentBind).
	byEndpoint map[string][]string
}

// endpointKey is what an agent endpoint is found by: the hostname of an http, https or tls
// tunnel (whatever the port the edge serves it on: 443, or 80 for http), the address of a
// tcp one. A hostname or address is bound by one agent instance at most (kinds.AgentBindKey).
func endpointKey(proto, hostport string) string {
	if proto == "tcp" {
		return "tcp " + hostport
	}
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return "host " + host
}

// heldTunnel is a tunnel and the connection that holds it.
type heldTunnel struct {
	Tunnel
	conn *agentConn
}

func newTunnelIndex() *tunnelIndex {
	return &tunnelIndex{byID: map[string]heldTunnel{}, byEndpoint: map[string][]string{}}
}

func (x *tunnelIndex) add(a *agentConn, t Tunnel) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.byID[t.ID] = heldTunnel{Tunnel: t, conn: a}
	if t.Hostport != "" {
		key := endpointKey(t.Proto, t.Hostport)
		x.byEndpoint[key] = append(x.byEndpoint[key], t.ID)
	}
}

func (x *tunnelIndex) remove(tunnelID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(tunnelID)
}

func (x *tunnelIndex) removeLocked(tunnelID string) {
	t, ok := x.byID[tunnelID]
	if !ok {
		return
	}
	delete(x.byID, tunnelID)
	if t.Hostport == "" {
		return
	}
	key := endpointKey(t.Proto, t.Hostport)
	if rest := slices.DeleteFunc(x.byEndpoint[key], func(id string) bool { return id == tunnelID }); len(rest) > 0 {
		x.byEndpoint[key] = rest
	} else {
		delete(x.byEndpoint, key)
	}
}

// removeSession removes every tunnel of a connection.
func (x *tunnelIndex) removeSession(a *agentConn) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for id, t := range x.byID {
		if t.conn == a {
			x.removeLocked(id)
		}
	}
}

func (x *tunnelIndex) get(tunnelID string) (heldTunnel, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t, ok := x.byID[tunnelID]
	return t, ok
}

// copied is t with labels of its own, so the caller cannot change the index's.
func (t heldTunnel) copied() Tunnel {
	out := t.Tunnel
	out.Labels = maps.Clone(t.Labels)
	return out
}

// Tunnel returns the online tunnel of this replica with that ID.
func (h *Plane) Tunnel(tunnelID string) (Tunnel, bool) {
	t, ok := h.tunnels.get(tunnelID)
	if !ok || t.conn.ending.Load() {
		return Tunnel{}, false
	}
	return t.copied(), true
}

// Matching returns the online labeled tunnels of this replica in the account whose labels
// include all of labels (a tunnel-group backend's), by tunnel ID.
func (h *Plane) Matching(accountID string, labels map[string]string) []Tunnel {
	h.tunnels.mu.RLock()
	var out []Tunnel
	for _, t := range h.tunnels.byID {
		if t.AccountID != accountID || t.Labels == nil || t.conn.ending.Load() || !includes(t.Labels, labels) {
			continue
		}
		out = append(out, t.copied())
	}
	h.tunnels.mu.RUnlock()
	slices.SortFunc(out, func(a, b Tunnel) int { return cmp.Compare(a.ID, b.ID) })
	return h.remoteMatching(out, accountID, labels)
}

// includes says every label of want is in have.
func includes(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Endpoint returns the online tunnel of this replica bound to the agent endpoint of proto
// at hostport: the hostname of an http, https or tls tunnel at whatever port the edge serves
// it ("app.example.com:443", "app.example.com:80" for http), the address of a tcp one
// ("1.tcp.example.com:20001").
func (h *Plane) Endpoint(proto, hostport string) (Tunnel, bool) {
	h.tunnels.mu.RLock()
	bound := slices.Clone(h.tunnels.byEndpoint[endpointKey(proto, hostport)])
	h.tunnels.mu.RUnlock()
	if len(bound) == 0 {
		return h.remoteEndpoint(proto, hostport)
	}
	// The newest first: an agent that reconnected before this replica noticed its lost
	// connection holds the older one.
	for _, id := range slices.Backward(bound) {
		if t, ok := h.Tunnel(id); ok && t.Proto == proto {
			return t, true
		}
	}
	return Tunnel{}, false
}

// OpenStream opens a stream to the agent holding tunnelID in this replica, with header
// written first (its TunnelID is tunnelID; an empty Proto is the tunnel's), for one visitor
// connection, and waits for the agent's dial result (within ctx): the stream returned
// carries the app's bytes. It fails with a *StreamError when the tunnel is not held here,
// its session is gone, or the agent could not reach its app or refused the stream.
// Closing the stream, or the end of the session, ends it.
func (h *Plane) OpenStream(ctx context.Context, tunnelID string, header agentproto.StreamHeader) (net.Conn, error) {
	t, ok := h.tunnels.get(tunnelID)
	if !ok {
		h.metrics.opened.WithLabelValues(outcomeOffline).Inc()
		return nil, &StreamError{TunnelID: tunnelID, Err: ErrTunnelOffline}
	}
	a := t.conn
	if a.ending.Load() {
		h.metrics.opened.WithLabelValues(outcomeEnded).Inc()
		return nil, &StreamError{TunnelID: tunnelID, Err: ErrSessionEnded}
	}
	header.TunnelID = tunnelID
	if header.Proto == "" {
		header.Proto = t.Proto
	}
	type opened struct {
		conn net.Conn
		err  error
	}
	done := make(chan opened, 1)
	go func() {
		st, err := a.mux.OpenStream(header)
		done <- opened{st, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-ctx.Done():
		go func() { // the stream may open still: nobody will use it
			if o := <-done; o.conn != nil {
				_ = o.conn.Close()
			}
		}()
		h.metrics.opened.WithLabelValues(outcomeFailed).Inc()
		return nil, ctx.Err()
	}
	if o.err != nil {
		return nil, h.streamFailed(a, tunnelID, o.err)
	}
	if err := h.awaitDial(ctx, a, tunnelID, o.conn); err != nil {
		_ = o.conn.Close()
		return nil, err
	}
	h.metrics.opened.WithLabelValues(outcomeOpened).Inc()
	h.metrics.open.Inc()
	a.streams.Add(1)
	return &stream{Conn: o.conn, release: func() {
		a.streams.Add(-1)
		h.metrics.open.Dec()
	}}, nil
}

// awaitDial reads the agent's dial result on a stream it opened, until ctx ends; it counts
// a failure's outcome.
func (h *Plane) awaitDial(ctx context.Context, a *agentConn, tunnelID string, st net.Conn) error {
	stop := context.AfterFunc(ctx, func() { _ = st.SetReadDeadline(time.Now()) })
	r, err := agentproto.ReadStreamResult(st)
	if !stop() { // ctx ended, and may have cut the read
		h.metrics.opened.WithLabelValues(outcomeFailed).Inc()
		return ctx.Err()
	}
	if err != nil {
		return h.streamFailed(a, tunnelID, err)
	}
	switch r.Code {
	case agentproto.StreamConnected:
		return nil
	case agentproto.StreamUnreachable:
		h.metrics.opened.WithLabelValues(outcomeUnreachable).Inc()
		return &StreamError{TunnelID: tunnelID, Err: ErrUpstreamUnreachable, Cause: errors.New(r.Reason)}
	default:
		h.metrics.opened.WithLabelValues(outcomeRefused).Inc()
		return &StreamError{TunnelID: tunnelID, Err: ErrStreamRefused, Cause: fmt.Errorf("code %d: %s", r.Code, r.Reason)}
	}
}

// streamFailed counts and returns err, the multiplexer's, of a stream to a's tunnel: the
// session's end when a's session is over.
func (h *Plane) streamFailed(a *agentConn, tunnelID string, err error) error {
	select {
	case <-a.mux.Done():
		h.metrics.opened.WithLabelValues(outcomeEnded).Inc()
		return &StreamError{TunnelID: tunnelID, Err: ErrSessionEnded, Cause: err}
	default:
	}
	h.metrics.opened.WithLabelValues(outcomeFailed).Inc()
	return fmt.Errorf("agentplane: tunnel %s: %w", tunnelID, err)
}

// stream is a visitor stream that counts itself out when closed.
type stream struct {
	net.Conn
	once    sync.Once
	release func()
}

func (s *stream) Close() error {
	err := s.Conn.Close()
	s.once.Do(s.release)
	return err
}

// Outcomes of OpenStream, the outcome label of warren_agent_streams_opened_total.
const (
	outcomeOpened  = "opened"
	outcomeOffline = "offline" // no session of this replica holds the tunnel
	outcomeEnded   = "ended"   // the session ended
	outcomeFailed  = "failed"  // the multiplexer could not open it, or the caller gave up
	// The agent could not reach its app (unreachable), or refused the stream (refused).
	outcomeUnreachable = "unreachable"
	outcomeRefused     = "refused"
)

// planeMetrics are the plane's series (bounded labels: outcomes only, never IDs).
type planeMetrics struct {
	open    prometheus.Gauge
	opened  *prometheus.CounterVec
	refused *prometheus.CounterVec // reason
}

func newPlaneMetrics(h *Plane, reg prometheus.Registerer) *planeMetrics {
	m := &planeMetrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "warren_agent_streams",
			Help: "Visitor streams open through the agent sessions of this replica.",
		}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_agent_streams_opened_total",
			Help: "Visitor streams asked of this replica's agent sessions, by outcome (opened, offline, ended, failed, unreachable, refused).",
		}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_agent_connections_refused_total",
			Help: "Agent connections refused by this replica, by reason (credential, ip_restriction, sessions, rate, protocol, unavailable, other).",
		}, []string{"reason"}),
	}
	for _, o := range []string{outcomeOpened, outcomeOffline, outcomeEnded, outcomeFailed, outcomeUnreachable, outcomeRefused} {
		m.opened.WithLabelValues(o)
	}
	for _, r := range refusalReasons {
		m.refused.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.open, m.opened, m.refused, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "warren_agent_session_streams_max",
			Help: "The most visitor streams one agent session of this replica holds open.",
		}, func() float64 { return float64(h.maxStreams()) }))
	}
	return m
}

// maxStreams is the most streams one connection holds open.
func (h *Plane) maxStreams() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int64
	for _, a := range h.conns {
		n = max(n, a.streams.Load())
	}
	return n
}

// The reason labels of warren_agent_connections_refused_total: a bounded set, each series
// there from the start at 0.
const (
	refusedCredential    = "credential"     // no, a malformed or an unknown token (ERR_200…ERR_203)
	refusedIPRestriction = "ip_restriction" // the account's agent IP restriction (ERR_220)
	refusedSessions      = "sessions"       // as many sessions held as allowed (ERR_225)
	refusedRate          = "rate"           // too many new sessions a minute (ERR_226)
	refusedProtocol      = "protocol"       // no v2 subprotocol, or a Hello that is not one
	refusedUnavailable   = "unavailable"    // the store is down or the server shutting down
	refusedOther         = "other"          // any other refusal
)

var refusalReasons = []string{refusedCredential, refusedIPRestriction, refusedSessions, refusedRate, refusedProtocol, refusedUnavailable, refusedOther}

// refuse counts a refused agent connection under the reason err tells.
func (h *Plane) refuse(err error) {
	h.metrics.refused.WithLabelValues(h.refusalReason(err)).Inc()
}

func (h *Plane) refusalReason(err error) string {
	if h.host.StoreDown(err) {
		return refusedUnavailable
	}
	var ae *api.Error
	var v *rules.Violation
	code := ""
	switch {
	case errors.As(err, &ae):
		code = ae.ErrorCode
	case errors.As(err, &v):
		code = v.Code
	}
	switch code {
	case "ERR_200", "ERR_201", "ERR_202", "ERR_203":
		return refusedCredential
	case "ERR_220":
		return refusedIPRestriction
	case agentproto.ErrTooManySessions:
		return refusedSessions
	case agentproto.ErrSessionRate:
		return refusedRate
	}
	return refusedOther
}
