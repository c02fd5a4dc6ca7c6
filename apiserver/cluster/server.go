package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/netcopy"
)

// Server answers other replicas' links: it opens each forwarded stream to a tunnel of this
// replica with Open, never elsewhere.
type Server struct {
	Keys *sealing.Keyring // KeysFor the secret key
	// Open opens a stream to a tunnel held by this replica (agentplane.Plane.OpenStream).
	Open func(ctx context.Context, tunnelID string, h agentproto.StreamHeader) (net.Conn, error)
	Log  *zap.Logger
	// Handshake bounds a link's TLS handshake and each stream's header; OpenTimeout the
	// agent's dial result.
	Handshake, OpenTimeout time.Duration

	once    sync.Once
	creds   *credentials
	err     error
	ctx     context.Context // ended by Close
	cancel  context.CancelFunc
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
	streams sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() {
		s.creds, s.err = newCredentials(s.Keys)
		s.ctx, s.cancel = context.WithCancel(context.Background())
		if s.Log == nil {
			s.Log = zap.NewNop()
		}
	})
}

// Serve accepts links on ln until it is closed.
func (s *Server) Serve(ln net.Listener) error {
	s.init()
	if s.err != nil {
		return s.err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if !s.track(c, true) {
			_ = c.Close()
			continue
		}
		go func() {
			defer s.streams.Done()
			defer s.track(c, false)
			s.serve(c)
		}()
	}
}

// Close ends every link being served and their streams, and waits for them; close the
// listener first.
func (s *Server) Close() {
	s.init()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.streams.Wait()
}

// track adds c to the links served, and counts it as a stream to wait for, or removes it;
// it adds none once the server is closed.
func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.conns, c)
		return true
	}
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.streams.Add(1)
	return true
}

// serve authenticates a link and serves its streams until it ends.
func (s *Server) serve(c net.Conn) {
	defer c.Close()
	handshake := orDefault(s.Handshake, 10*time.Second)
	ctx, cancel := context.WithTimeout(s.ctx, handshake)
	tc := tls.Server(c, s.creds.server)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		s.Log.Warn("cluster link refused", zap.Stringer("peer", c.RemoteAddr()), zap.Error(err))
		return
	}
	sess, err := yamux.Server(tc, muxConfig(handshake))
	if err != nil {
		return
	}
	defer sess.Close()
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			return
		}
		s.mu.Lock()
		closed := s.closed
		if !closed {
			s.streams.Add(1)
		}
		s.mu.Unlock()
		if closed {
			return
		}
		go func() {
			defer s.streams.Done()
			s.serveStream(st, handshake)
		}()
	}
}

// serveStream opens the stream its header asks for and splices the two.
func (s *Server) serveStream(st *yamux.Stream, handshake time.Duration) {
	defer st.Close()
	_ = st.SetReadDeadline(time.Now().Add(handshake))
	h, err := agentproto.ReadStreamHeader(st)
	if err != nil {
		s.Log.Warn("cluster link: bad stream header", zap.Stringer("peer", st.RemoteAddr()), zap.Error(err))
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(s.ctx, orDefault(s.OpenTimeout, 30*time.Second))
	up, err := s.Open(ctx, h.TunnelID, h)
	cancel()
	if err != nil {
		_ = agentproto.WriteStreamResult(st, resultOf(err))
		return
	}
	defer up.Close()
	if err := agentproto.WriteStreamResult(st, agentproto.StreamResult{Code: agentproto.StreamConnected}); err != nil {
		return
	}
	// A link that ends (the peer died, Close) ends the upstream too, which the link stream's
	// end would only half-close.
	spliced := make(chan struct{})
	defer close(spliced)
	go func() {
		select {
		case <-st.Session().CloseChan():
			_ = up.SetDeadline(time.Now()) // a yamux stream's Close does not end its Read
			_ = up.Close()
		case <-spliced:
		}
	}()
	splice(st, up)
}

// resultOf is the dial result that tells the client why Open failed.
func resultOf(err error) agentproto.StreamResult {
	switch {
	case errors.Is(err, agentplane.ErrUpstreamUnreachable):
		return agentproto.StreamResult{Code: agentproto.StreamUnreachable, Reason: err.Error()}
	case errors.Is(err, agentplane.ErrStreamRefused):
		return agentproto.StreamResult{Code: agentproto.StreamRefused, Reason: err.Error()}
	default: // offline, the session ended, or the multiplexer failed: not here any more
		return agentproto.StreamResult{Code: StreamOffline, Reason: err.Error()}
	}
}

// splice copies bytes both ways until both are done: a side's end is passed on as a
// half-close (a yamux stream's Close is one).
func splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = netcopy.Copy(b, a)
		_ = netcopy.CloseWrite(b)
	}()
	_, _ = netcopy.Copy(a, b)
	_ = netcopy.CloseWrite(a)
	<-done
}
