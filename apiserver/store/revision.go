package store

import "context"

// RoutingKinds are the kinds the traffic plane's routing snapshot is compiled from: a write
// of one of them moves the routing revision. Tunnels, endpoints and sessions are not among
// them: the edge asks the agent plane for those, live.
var RoutingKinds = map[string]bool{
	"https_edge": true, "https_edge_route": true, "tcp_edge": true, "tls_edge": true,
	"backend_failover": true, "backend_weighted": true, "backend_http_response": true,
	"backend_static": true, "backend_tunnel_group": true,
	"reserved_domain": true, "reserved_addr": true, "tls_certificate": true,
	"certificate_authority": true, "ip_policy": true, "ip_policy_rule": true, "ip_restriction": true,
}

// Routing is a store the traffic plane compiles its routing snapshot from.
type Routing interface {
	// Revision is a counter that a write transaction changing a kind of RoutingKinds moves,
	// in that transaction, and that never moves back: equal revisions mean equal routing
	// configuration. (The sum of a counter per account, so that routing writes of different
	// accounts never conflict on it.)
	// Read it before the objects it describes (ListQuery.AllAccounts): they are then at
	// least as new as the revision, and a change in between only costs one more rebuild.
	Revision(ctx context.Context) (int64, error)
	// OnCommit registers fn, called after each write transaction of this process commits
	// with the kinds it wrote (inserted, updated or deleted), sorted; never for one that
	// wrote nothing. fn must be quick: it runs on the writer's goroutine.
	OnCommit(fn func(kinds []string))
}
