package apiserver

import (
	"context"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/cluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// EdgeTunnels is this server's agent plane as the edge reaches it (edge.Tunnels): the edge
// declares what it needs and imports neither the API nor the plane.
func (s *Server) EdgeTunnels() edge.Tunnels {
	t := edgeTunnels{p: s.agents}
	if s.link != nil {
		t.link = s.link.client
	}
	return t
}

// MetricsRegisterer is the registry served on GET /metrics, for the edge's series.
func (s *Server) MetricsRegisterer() prometheus.Registerer { return s.metrics.registry }

type edgeTunnels struct {
	p    *agentplane.Plane
	link *cluster.Client // nil without a cluster link
}

// OpenStream opens a stream to a tunnel of this replica, else over the link to the replica
// that holds it.
func (t edgeTunnels) OpenStream(ctx context.Context, tunnelID string, h agentproto.StreamHeader) (net.Conn, error) {
	if _, here := t.p.Tunnel(tunnelID); !here && t.link != nil {
		if addr, ok := t.p.RemoteLink(tunnelID); ok {
			return t.link.OpenStream(ctx, addr, tunnelID, h)
		}
	}
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
	return edge.Tunnel{ID: t.ID, AccountID: t.AccountID, SessionID: t.SessionID, Proto: t.Proto, ForwardsTo: t.ForwardsTo, Labels: t.Labels, Remote: t.Link != ""}
}
