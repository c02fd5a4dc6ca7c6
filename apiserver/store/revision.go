package store

import "context"

// Routing is a store the traffic plane compiles its routing snapshot from.
type Routing interface {
	// Revision is a counter that a write transaction changing a routing kind (kinds.Routing) moves,
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
