package agentclient

import (
	"context"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// acceptStreams takes the server's visitor streams until the session ends, and serves each
// on its own goroutine (counted in streams, so the session waits for them).
func (c *Client) acceptStreams(ctx context.Context, mux *agentproto.AgentMux, cn *conn, streams *sync.WaitGroup) {
	for {
		st, err := mux.AcceptStream(ctx)
		if err != nil {
			return // the session ended
		}
		streams.Add(1)
		go func() {
			defer streams.Done()
			c.serveStream(ctx, st, cn)
		}()
	}
}

// serveStream reads a visitor stream's header, within the handshake timeout, and forwards
// the stream to its tunnel's forwards_to; a stream for a tunnel this session did not bind
// is closed.
func (c *Client) serveStream(ctx context.Context, st net.Conn, cn *conn) {
	_ = st.SetReadDeadline(time.Now().Add(c.cfg.HandshakeTimeout))
	h, err := agentproto.ReadStreamHeader(st)
	_ = st.SetReadDeadline(time.Time{})
	if err != nil {
		c.log.Warn("visitor stream refused", zap.Error(err))
		_ = st.Close()
		return
	}
	cn.mu.Lock()
	t, ok := cn.bound[h.TunnelID]
	cn.mu.Unlock()
	if !ok {
		c.log.Warn("visitor stream for a tunnel this session did not bind", zap.String("tunnel_id", h.TunnelID))
		_ = st.Close()
		return
	}
	c.forwarder.Serve(ctx, st, h, t.ForwardsTo)
}
