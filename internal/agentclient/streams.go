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
// the stream to its tunnel's forwards_to; a stream whose header cannot be read, or for a
// tunnel this session did not bind, is refused (StreamRefused) and closed.
func (c *Client) serveStream(ctx context.Context, st net.Conn, cn *conn) {
	_ = st.SetReadDeadline(time.Now().Add(c.cfg.HandshakeTimeout))
	h, err := agentproto.ReadStreamHeader(st)
	_ = st.SetReadDeadline(time.Time{})
	if err != nil {
		c.log.Warn("visitor stream refused", zap.Error(err))
		refuseStream(st, err.Error())
		return
	}
	cn.mu.Lock()
	t, ok := cn.bound[h.TunnelID]
	cn.mu.Unlock()
	if !ok {
		c.log.Warn("visitor stream for a tunnel this session did not bind", zap.String("tunnel_id", h.TunnelID))
		refuseStream(st, "the agent's session holds no tunnel "+h.TunnelID)
		return
	}
	c.forwarder.Serve(ctx, st, h, t.ForwardsTo)
}

// refuseStream answers a stream with StreamRefused and closes it.
func refuseStream(st net.Conn, reason string) {
	_ = agentproto.WriteStreamResult(st, agentproto.StreamResult{Code: agentproto.StreamRefused, Reason: reason})
	_ = st.Close()
}
