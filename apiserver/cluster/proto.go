// Package cluster is the internal link between replicas: a replica that receives traffic
// for a tunnel whose agent is connected to another replica opens the stream there.
//
// A replica keeps one link connection to each peer it forwards to: TLS 1.3 with mutual
// authentication by certificates whose keys derive from the shared secret key (credentials),
// carrying a yamux session. Each forwarded visitor stream is a yamux stream: the agent
// protocol's stream header, the dial result as the agent protocol has it (or
// StreamOffline), then the visitor's bytes both ways. The server opens streams to its own
// tunnels only, so a forwarded stream is never forwarded again.
package cluster

import (
	"errors"
	"io"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// Purpose is what the link key is derived for (sealing.Keyring.Derive).
const Purpose = "cluster link"

// KeysFor returns the link's keys, derived from the store's secret keys: every replica with
// the same secret key derives the same.
func KeysFor(secret *sealing.Keyring) (*sealing.Keyring, error) {
	if secret == nil {
		return nil, errors.New("cluster: the link needs the secret key")
	}
	return secret.Derive(Purpose)
}

// StreamOffline is the dial result of a stream to a tunnel that the replica does not hold
// (any more): beside the agent protocol's StreamConnected, StreamUnreachable and
// StreamRefused.
const StreamOffline = 3

// ALPN names the protocol and its version in the TLS handshake: version 1 was a TCP
// connection per stream, in clear after a sealed challenge.
const ALPN = "warren-cluster.v2"

// ErrUnauthenticated: the peer did not prove it holds the link key.
var ErrUnauthenticated = errors.New("cluster: the peer did not authenticate")

const (
	// keepAlive is how often an idle link is pinged: a peer silent for a ping and a write
	// timeout is gone, and every stream over the link ends.
	keepAlive    = 15 * time.Second
	writeTimeout = 10 * time.Second
	// streamCloseTimeout is how long a stream closed on one side waits for the other side's
	// close, as on the agent's connection.
	streamCloseTimeout = 5 * time.Minute
)

// muxConfig is the yamux configuration of both ends: the agent protocol's stream window
// (a forwarded stream moves as fast as the agent's), keepalives, and an open that the
// peer must acknowledge within openTimeout.
func muxConfig(openTimeout time.Duration) *yamux.Config {
	return &yamux.Config{
		AcceptBacklog:          256,
		EnableKeepAlive:        true,
		KeepAliveInterval:      keepAlive,
		ConnectionWriteTimeout: writeTimeout,
		MaxStreamWindowSize:    agentproto.StreamWindow,
		StreamOpenTimeout:      openTimeout,
		StreamCloseTimeout:     streamCloseTimeout,
		LogOutput:              io.Discard,
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
