package apiserver

import "github.com/warrenhq/terraform-provider-warren/apiserver/kinds"

// Abandon stops a server's agent plane as if its process had died: its loops end and its
// agents' sockets close, but their sessions and the replica's lease stay in the store for
// the other replicas to sweep.
func Abandon(s *Server) { s.agents.Abandon() }

// KindAgentReplica is the store kind of the replicas' leases.
const KindAgentReplica = kinds.AgentReplica

// KindIdempotencyKey is the store kind of the Idempotency-Key records.
const KindIdempotencyKey = kinds.IdempotencyKey

// UpgradeRouteSecrets is the start-up step that seals the module secrets of routes stored
// before they were.
var UpgradeRouteSecrets = upgradeRouteSecrets
