package edge

import (
	"context"
	"crypto/tls"
	"errors"
	"github.com/warrenhq/terraform-provider-warren/internal/netcopy"
	"io"
	"net"
	"net/netip"
	"time"

	"go.uber.org/zap"
)

// streamVisit is one TCP or TLS connection through an edge or agent endpoint.
type streamVisit struct {
	edgeID   string
	account  string // the edge's account, for its traffic; "" for an agent endpoint
	hostport string
	client   netip.AddrPort
	proto    string // of a stream to a tunnel without its own ("tcp", "tls")
	// What a traffic policy sees: the edge's address, when the connection came, and of a
	// TLS edge the ClientHello's server name and highest version offered.
	server     netip.AddrPort
	start      time.Time
	sni        string
	tlsOffered uint16
	policyLog  map[string]any // what a traffic policy's log actions recorded
}

// serveStream connects a visitor's connection to the first of ups that takes it and copies
// both ways until either side ends or nothing moves for IdleTimeout.
func (e *Edge) serveStream(conn net.Conn, v streamVisit, ups []upstream) {
	defer conn.Close()
	var up net.Conn
	var err error
	for _, u := range ups {
		if up, err = e.dialStream(u, v); err == nil {
			break
		}
	}
	if up == nil {
		if err == nil {
			err = errors.New("no tunnel online")
		}
		e.log.Info("edge stream refused", zap.String("edge_id", v.edgeID), zap.String("host", v.hostport),
			zap.String("client_ip", v.client.Addr().String()), zap.Error(err))
		e.finishStream(v.account, v.edgeID, "failed", 0, 0)
		return
	}
	defer up.Close()
	start := time.Now()
	in, out := e.pipe(conn, up)
	e.finishStream(v.account, v.edgeID, "served", in, out)
	fields := []zap.Field{zap.String("edge_id", v.edgeID), zap.String("host", v.hostport),
		zap.String("client_ip", v.client.Addr().String()), zap.Duration("duration", time.Since(start)),
		zap.Int64("bytes_in", in), zap.Int64("bytes_out", out)}
	if v.policyLog != nil {
		fields = append(fields, zap.Any("policy_log", v.policyLog))
	}
	e.log.Info("edge stream", fields...)
}

// dialStream opens the upstream connection of a stream.
func (e *Edge) dialStream(u upstream, v streamVisit) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(e.closeCtx, e.opts.DialTimeout)
	defer cancel()
	switch {
	case u.tunnel != nil:
		return e.openStream(ctx, u.tunnel, proto(u.tunnel, v.proto), v.client, v.hostport)
	case u.static != nil:
		c, err := e.dialer.DialContext(ctx, "tcp", u.static.addr)
		if err != nil || !u.static.tls {
			return c, err
		}
		host, _, _ := net.SplitHostPort(u.static.addr)
		cfg := staticTLS(e.opts.StaticRootCAs)
		cfg.ServerName = host
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
	return nil, errors.New("an http_response backend cannot serve a TCP or TLS connection")
}

// pipe copies a and b both ways until both directions end, or nothing moves either way for
// IdleTimeout; it returns the bytes from a to b (in) and from b to a (out).
func (e *Edge) pipe(a, b net.Conn) (in, out int64) {
	closeBoth := func() { a.Close(); b.Close() }
	idle := newIdleTimer(e.opts.IdleTimeout, closeBoth)
	defer idle.stop()
	// Close ends the edge's streams too.
	defer context.AfterFunc(e.closeCtx, closeBoth)()
	done := make(chan int64, 1)
	go func() {
		n, _ := netcopy.Copy(idleWriter{b, idle}, a)
		_ = netcopy.CloseWrite(b)
		done <- n
	}()
	out, _ = netcopy.Copy(idleWriter{a, idle}, b)
	_ = netcopy.CloseWrite(a)
	return <-done, out
}

// idleTimer fires when it is not reset for d.
type idleTimer struct {
	d time.Duration
	t *time.Timer
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	return &idleTimer{d: d, t: time.AfterFunc(d, fire)}
}

func (t *idleTimer) reset() { t.t.Reset(t.d) }
func (t *idleTimer) stop()  { t.t.Stop() }

// idleWriter resets the idle timer on every write.
type idleWriter struct {
	w     io.Writer
	timer *idleTimer
}

func (w idleWriter) Write(p []byte) (int, error) {
	w.timer.reset()
	return w.w.Write(p)
}

// serveEndpointStream passes a connection through to an agent endpoint's tunnel (proto tls
// or tcp), after the account's endpoints restriction.
func (e *Edge) serveEndpointStream(s *Snapshot, conn net.Conn, t Tunnel, proto, hostport string) {
	v := streamVisit{edgeID: "endpoint", hostport: hostport, client: clientAddr(conn.RemoteAddr()), proto: proto}
	_ = conn.SetDeadline(time.Time{})
	if s.accountDisabled(t.AccountID) || !e.endpointsAllowed(s, t.AccountID, v.client.Addr()) {
		e.finishStream("", v.edgeID, "refused", 0, 0)
		conn.Close()
		return
	}
	e.serveStream(conn, v, []upstream{{tunnel: &t}})
}
