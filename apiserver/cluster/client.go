package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// Client opens streams to tunnels held by other replicas, over one link per peer: dialled
// when first needed, dialled again once broken, closed after IdleTimeout without streams.
type Client struct {
	Keys   *sealing.Keyring // KeysFor the secret key
	Dialer net.Dialer
	// DialTimeout bounds a link's dial and TLS handshake, and a peer's acknowledgement of a
	// new stream; IdleTimeout closes a link that carried no stream for that long.
	DialTimeout, IdleTimeout time.Duration

	once   sync.Once
	creds  *credentials
	err    error
	mu     sync.Mutex
	peers  map[string]*peer // by link address
	closed bool
}

// peer is the link to one replica: being dialled until ready is closed, then sess or err.
type peer struct {
	ready  chan struct{}
	sess   *yamux.Session
	err    error
	opened atomic.Bool // a stream was opened since the last idle check
}

// errClosed: OpenStream after Close.
var errClosed = errors.New("cluster: the link client is closed")

// OpenStream opens a stream to tunnelID through the replica whose link listens at addr, h
// written first, and waits for the agent's dial result (within ctx), as
// agentplane.Plane.OpenStream does for a local tunnel, with its *agentplane.StreamError.
func (c *Client) OpenStream(ctx context.Context, addr, tunnelID string, h agentproto.StreamHeader) (net.Conn, error) {
	st, err := c.stream(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: err}
	}
	// A stream's Close only ends its writing: the deadline ends the wait for the result.
	stop := context.AfterFunc(ctx, func() { _ = st.SetDeadline(time.Now()) })
	h.TunnelID = tunnelID
	r, err := open(st, h)
	if !stop() {
		_ = st.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err != nil {
		_ = st.Close()
		return nil, &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: err}
	}
	switch r.Code {
	case agentproto.StreamConnected:
		return st, nil
	case agentproto.StreamUnreachable:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrUpstreamUnreachable, Cause: errors.New(r.Reason)}
	case agentproto.StreamRefused:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrStreamRefused, Cause: errors.New(r.Reason)}
	default:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: fmt.Errorf("replica at %s: %s", addr, r.Reason)}
	}
	_ = st.Close()
	return nil, err
}

func open(st net.Conn, h agentproto.StreamHeader) (agentproto.StreamResult, error) {
	if err := agentproto.WriteStreamHeader(st, h); err != nil {
		return agentproto.StreamResult{}, err
	}
	return agentproto.ReadStreamResult(st)
}

// stream opens a stream on the link to addr. A pooled link found broken at the open, when
// nothing of the stream has been sent, is dialled again once.
func (c *Client) stream(ctx context.Context, addr string) (*yamux.Stream, error) {
	for try := 0; ; try++ {
		p, err := c.peer(ctx, addr)
		if err != nil {
			return nil, err
		}
		p.opened.Store(true)
		st, err := p.sess.OpenStream()
		if err == nil {
			return st, nil
		}
		c.forget(addr, p)
		if try > 0 || !errors.Is(err, yamux.ErrSessionShutdown) {
			return nil, fmt.Errorf("cluster: opening a stream to %s: %w", addr, err)
		}
	}
}

// peer returns the link to addr, dialling it if there is none; callers that come while it
// is dialled wait for the same dial.
func (c *Client) peer(ctx context.Context, addr string) (*peer, error) {
	c.once.Do(func() { c.creds, c.err = newCredentials(c.Keys) })
	if c.err != nil {
		return nil, c.err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	p := c.peers[addr]
	if p == nil {
		p = &peer{ready: make(chan struct{})}
		if c.peers == nil {
			c.peers = map[string]*peer{}
		}
		c.peers[addr] = p
		go c.dial(addr, p) // not bound by ctx: others may wait for it
	}
	c.mu.Unlock()
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// dial links to addr within DialTimeout, then watches the link until it ends or idles.
func (c *Client) dial(addr string, p *peer) {
	timeout := orDefault(c.DialTimeout, 10*time.Second)
	p.sess, p.err = c.link(addr, timeout)
	if p.err != nil {
		c.forget(addr, p)
		close(p.ready)
		return
	}
	c.mu.Lock()
	if c.closed { // Close came during the dial
		_ = p.sess.Close()
	}
	close(p.ready)
	c.mu.Unlock()
	idle := time.NewTicker(orDefault(c.IdleTimeout, 2*time.Minute))
	defer idle.Stop()
	for {
		select {
		case <-p.sess.CloseChan():
			c.forget(addr, p)
			return
		case <-idle.C:
			if !p.opened.Swap(false) && p.sess.NumStreams() == 0 {
				c.forget(addr, p) // first: no caller gets it any more
				_ = p.sess.Close()
				return
			}
		}
	}
}

// link dials addr, authenticates both ends and starts the multiplexer's client end. The
// server is asked for the certificate of each of our keys in turn, while its certificate
// names another: during a rotation it may hold only a previous key.
func (c *Client) link(addr string, timeout time.Duration) (*yamux.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var tc *tls.Conn
	var err error
	for _, cfg := range c.creds.clients {
		if tc, err = c.handshake(ctx, addr, cfg); err == nil || !unauthenticated(err) {
			break
		}
	}
	if unauthenticated(err) {
		return nil, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if err != nil {
		return nil, err
	}
	sess, err := yamux.Client(tc, muxConfig(timeout))
	if err != nil {
		_ = tc.Close()
		return nil, err
	}
	return sess, nil
}

// handshake dials addr and runs the TLS handshake with cfg.
func (c *Client) handshake(ctx context.Context, addr string, cfg *tls.Config) (*tls.Conn, error) {
	conn, err := c.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("cluster: the link to %s: %w", addr, err)
	}
	return tc, nil
}

// forget drops p from the pool if it is still there: the next stream to addr dials again.
func (c *Client) forget(addr string, p *peer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peers[addr] == p {
		delete(c.peers, addr)
	}
}

// Close ends every link and their streams; OpenStream fails after it.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, p := range c.peers {
		select {
		case <-p.ready:
			if p.sess != nil {
				_ = p.sess.Close()
			}
		default: // being dialled: dial closes it
		}
	}
	c.peers = nil
}
