package apiserver

import (
	"context"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// EdgeTunnels is this server's agent plane as the edge reaches it (edge.Tunnels): the edge
// declares what it needs and imports neither the API nor the plane.
func (s *Server) EdgeTunnels() edge.Tunnels { return edgeTunnels{s.agents} }

// MetricsRegisterer is the registry served on GET /metrics, for the edge's series.
func (s *Server) MetricsRegisterer() prometheus.Registerer { return s.metrics.registry }

type edgeTunnels struct{ p *agentplane.Plane }

func (t edgeTunnels) OpenStream(ctx context.Context, tunnelID string, h agentproto.StreamHeader) (net.Conn, error) {
	return t.p.OpenStream(ctx, tunnelID, h)
}

func (t edgeTunnels) Matching(accountID string, labels map[string]string) []edge.Tunnel {
	held := t.p.Matching(accountID, labels)
	out := make([]edge.Tunnel, len(held))
	for i, h := range held {
		out[i] = edgeTunnel(h)
	}
	return out
}

func (t edgeTunnels) Endpoint(proto, hostport string) (edge.Tunnel, bool) {
	h, ok := t.p.Endpoint(proto, hostport)
	return edgeTunnel(h), ok
}

func edgeTunnel(t agentplane.Tunnel) edge.Tunnel {
	return edge.Tunnel{ID: t.ID, AccountID: t.AccountID, SessionID: t.SessionID, Proto: t.Proto, ForwardsTo: t.ForwardsTo, Labels: t.Labels}
}
