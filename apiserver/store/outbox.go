package store

import (
	"context"
	"time"
)

// The outbox holds the account's audit events (details.md §9) and their deliveries. An event
// is written by Tx.AddEvent in the same transaction as the change it reports, with one
// pending delivery per destination subscribed to its type, so an acknowledged change always
// has its event and a rolled-back one never does. Delivery workers, in any number of server
// processes, lease the deliveries of one destination at a time (Claim), send them, and record
// the outcome (Finish); a lease that runs out (its holder died) is taken over.

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Event is one event in the outbox.
type Event struct {
	Seq       int64 // assigned by AddEvent; the outbox's order
	ID        string
	AccountID string
	Type      string
	Time      time.Time
	Payload   []byte // the delivered JSON document
}

// Delivery is one event on its way to one destination.
type Delivery struct {
	Seq           int64 // assigned by AddEvent; a destination's deliveries go in this order
	ID            string
	EventID       string
	DestinationID string
	AccountID     string
	State         string // DeliveryPending, DeliveryDelivered or DeliveryFailed
	Attempts      int
	NextAttempt   time.Time // when a pending delivery is due
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Event         *Event // filled by Claim
}

// NewDelivery is a delivery AddEvent creates: its ID and its destination.
type NewDelivery struct {
	ID            string
	DestinationID string
}

// Outcome is what became of one claimed delivery.
type Outcome struct {
	Seq         int64
	State       string    // DeliveryDelivered, DeliveryFailed, or DeliveryPending to retry
	NextAttempt time.Time // when to retry a pending one
	Error       string    // the last error, "" when delivered
}

// OutboxQuery selects events or deliveries for operators, newest first.
type OutboxQuery struct {
	AccountID     string // "" for every account
	DestinationID string // deliveries only; "" for every destination
	State         string // deliveries only; "" for every state
	EventID       string // deliveries only; "" for every event
	BeforeID      string // only entries older than the one with this ID; "" for no bound
	Limit         int    // at most this many; 0 for no limit
}

// Outbox is the store's side of event delivery. Each method runs its own transaction.
type Outbox interface {
	// Claim leases the due pending deliveries of one destination, oldest first and at most
	// limit, to holder until now+lease, with their events. A destination's deliveries are
	// claimed only from its oldest pending one, and only while no other holder's lease on
	// them runs, so they go out in order and one holder at a time. It returns nil when
	// nothing is due.
	Claim(ctx context.Context, holder string, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// Finish records the outcomes of deliveries holder claimed, and ends its lease on them.
	// Deliveries whose lease another holder has taken over since are left alone.
	Finish(ctx context.Context, holder string, now time.Time, outcomes []Outcome) error
	// Events lists events, newest first.
	Events(ctx context.Context, q OutboxQuery) ([]*Event, error)
	// Deliveries lists deliveries, newest first.
	Deliveries(ctx context.Context, q OutboxQuery) ([]*Delivery, error)
	// Pending counts the pending deliveries of every account (the outbox's depth) and
	// tells when the oldest of them was created (zero when none is pending).
	Pending(ctx context.Context) (n int64, oldest time.Time, err error)
	// Prune deletes the events older than before that have no pending delivery, with their
	// deliveries, and reports how many events it deleted.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
