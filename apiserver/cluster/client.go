package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// Client opens streams to tunnels held by other replicas.
type Client struct {
	Keys   *sealing.Keyring // KeysFor the secret key
	Dialer net.Dialer
}

// OpenStream opens a stream to tunnelID through the replica whose link listens at addr, h
// written first, and waits for the agent's dial result (within ctx), as
// agentplane.Plane.OpenStream does for a local tunnel, with its *agentplane.StreamError.
func (c *Client) OpenStream(ctx context.Context, addr, tunnelID string, h agentproto.StreamHeader) (net.Conn, error) {
	conn, err := c.Dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: err}
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	h.TunnelID = tunnelID
	r, err := c.open(conn, h)
	if !stop() {
		_ = conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err != nil {
		_ = conn.Close()
		return nil, &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: err}
	}
	switch r.Code {
	case agentproto.StreamConnected:
		return conn, nil
	case agentproto.StreamUnreachable:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrUpstreamUnreachable, Cause: errors.New(r.Reason)}
	case agentproto.StreamRefused:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrStreamRefused, Cause: errors.New(r.Reason)}
	default:
		err = &agentplane.StreamError{TunnelID: tunnelID, Err: agentplane.ErrTunnelOffline, Cause: fmt.Errorf("replica at %s: %s", addr, r.Reason)}
	}
	_ = conn.Close()
	return nil, err
}

func (c *Client) open(conn net.Conn, h agentproto.StreamHeader) (agentproto.StreamResult, error) {
	if err := clientHandshake(conn, c.Keys); err != nil {
		return agentproto.StreamResult{}, err
	}
	if err := agentproto.WriteStreamHeader(conn, h); err != nil {
		return agentproto.StreamResult{}, err
	}
	return agentproto.ReadStreamResult(conn)
}
