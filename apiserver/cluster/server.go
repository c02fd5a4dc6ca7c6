package cluster

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

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
	// Handshake bounds the handshake and the header; OpenTimeout the agent's dial result.
	Handshake, OpenTimeout time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Serve accepts links on ln until it is closed.
func (s *Server) Serve(ln net.Listener) error {
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			s.serve(c)
		}()
	}
}

// Close ends every link being served and waits for them; close the listener first.
func (s *Server) Close() {
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
}

// track adds c to the links served, or removes it; it adds none once the server is closed.
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
	return true
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	log := s.Log
	if log == nil {
		log = zap.NewNop()
	}
	_ = c.SetDeadline(time.Now().Add(orDefault(s.Handshake, 10*time.Second)))
	if err := serverHandshake(c, s.Keys); err != nil {
		log.Warn("cluster link refused", zap.Stringer("peer", c.RemoteAddr()), zap.Error(err))
		return
	}
	h, err := agentproto.ReadStreamHeader(c)
	if err != nil {
		log.Warn("cluster link: bad stream header", zap.Stringer("peer", c.RemoteAddr()), zap.Error(err))
		return
	}
	_ = c.SetDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(context.Background(), orDefault(s.OpenTimeout, 30*time.Second))
	st, err := s.Open(ctx, h.TunnelID, h)
	cancel()
	if err != nil {
		_ = agentproto.WriteStreamResult(c, resultOf(err))
		return
	}
	defer st.Close()
	if err := agentproto.WriteStreamResult(c, agentproto.StreamResult{Code: agentproto.StreamConnected}); err != nil {
		return
	}
	splice(c, st)
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
// half-close where the other side has one, else as a close. netcopy holds a small buffer
// while a forwarded stream is idle, where io.Copy held 32 KiB per direction.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	pass := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = netcopy.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
			return
		}
		_ = dst.Close()
		_ = src.Close()
	}
	wg.Add(2)
	go pass(a, b)
	go pass(b, a)
	wg.Wait()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
