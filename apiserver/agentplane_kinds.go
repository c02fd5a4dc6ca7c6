package apiserver

import "github.com/warrenhq/terraform-provider-warren/apiserver/kinds"

// The agent plane's files (agents.go, agent_*.go, tunnel_sessions.go) still spell these
// kinds and keys the old way while they move to a package of their own; they read the table
// in package kinds through these names until then.
const (
	kindCredential         = kinds.Credential
	kindTunnelGroupBackend = kinds.TunnelGroupBackend
)

type tokenSecret = kinds.TokenSecret

func addrKey(addr string) string { return kinds.ReservedAddrKey(addr) }
