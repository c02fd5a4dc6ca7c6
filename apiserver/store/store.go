// Package store persists the API's objects.
//
// Every object is a JSON document beside a few indexed columns (kind, id, account, parent),
// a set of unique keys and the IDs it references. That one shape serves every API family, so
// "does the referenced object exist", "is this object still referenced" and "is this name
// taken" are single queries inside the write transaction, on every implementation.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Object is one stored object.
type Object struct {
	Kind      string // the family's kind, e.g. "api_key"
	ID        string // prefixed ID, primary key across all kinds
	AccountID string // owning account ("" only for accounts themselves)
	ParentID  string // owning object for nested families (e.g. a route's edge), else ""
	Doc       []byte // the object's JSON document (its wire form without uri members)
	Secret    []byte // server-only data (token hash, private key); never rendered
	// UniqueKeys are claimed by the object for as long as it exists; a second object
	// claiming one of them fails with *DuplicateError. Keys are global: scope them by
	// embedding the account ID where the rule is per account.
	UniqueKeys []string
	// Refs are the IDs of the objects this one references. A referenced object cannot be
	// deleted while a reference to it exists (ReferencedError). UniqueKeys and Refs are sets:
	// they come back sorted and without duplicates. An object must not reference itself.
	Refs []string
}

// ListQuery selects objects of one kind in one account, newest (highest ID) first.
type ListQuery struct {
	Kind      string
	AccountID string
	ParentID  string // matched exactly: "" selects top-level objects
	BeforeID  string // only IDs lower than this one; "" for no bound
	Limit     int    // at most this many; 0 for no limit
	Where     *Cond  // only the objects whose document meets it; nil for all
	// DocsOnly: the objects come without their UniqueKeys and Refs, which a page that is
	// only rendered never reads (they cost two lookups per object).
	DocsOnly bool
	// AllAccounts selects the objects of Kind in every account, whatever their parent
	// (AccountID and ParentID are ignored): what the traffic plane compiles, and the
	// operators' list of accounts.
	AllAccounts bool
}

// Store is a transactional object store.
type Store interface {
	// Read runs fn in a read-only transaction that sees one consistent snapshot.
	Read(ctx context.Context, fn func(Tx) error) error
	// Write runs fn in a serializable read-write transaction and commits it durably when fn
	// returns nil; any error from fn rolls back every change it made. An implementation may
	// run fn more than once (to retry a serialization failure), so fn must have no effects
	// outside tx. fn must not call Write itself.
	Write(ctx context.Context, fn func(Tx) error) error
	Outbox
	// Ready reports whether the store answers a read and its schema is at least the version
	// of this binary's newest migration (*SchemaError when it is older).
	Ready(ctx context.Context) error
	Close() error
}

// AccountKey names a unique key of an object's account for Tx.GetWith: Prefix, the
// account's ID, Suffix.
type AccountKey struct{ Prefix, Suffix string }

// Tx is the view of the store inside one transaction.
type Tx interface {
	// Get returns the object with this kind and ID, in any account, or ErrNotFound.
	Get(ctx context.Context, kind, id string) (*Object, error)
	// GetWith is Get that also returns, from the same query, the objects the object's refs
	// name, the object holding the unique key key.Prefix + its account ID + key.Suffix,
	// when one does, and the object whose ID is its account ID, when one does, in no given
	// order: what a request resolves in one step (an API key, its owner, its account's API
	// IP restriction and its account). The objects come without their UniqueKeys and Refs.
	GetWith(ctx context.Context, kind, id string, key AccountKey) (obj *Object, with []*Object, err error)
	// List returns the objects that q selects, in descending ID order.
	List(ctx context.Context, q ListQuery) ([]*Object, error)
	// Insert stores a new object with its unique keys and refs. It fails with
	// *DuplicateError when a unique key is taken, ErrExists when the ID is, and
	// ErrNotFound when a ref names no stored object.
	Insert(ctx context.Context, o *Object) error
	// Update replaces the doc, secret, unique keys and refs of a stored object (matched by
	// kind and ID; account and parent never change). Errors as Insert, or ErrNotFound.
	Update(ctx context.Context, o *Object) error
	// Delete removes an object. ErrNotFound when absent; *ReferencedError while other
	// objects still reference it.
	Delete(ctx context.Context, kind, id string) error
	// Referrers returns the objects whose refs include id, in descending ID order (the
	// order of ReferencedError.ReferrerIDs too).
	Referrers(ctx context.Context, id string) ([]*Object, error)
	// Lookup returns the object holding a unique key, or ErrNotFound.
	Lookup(ctx context.Context, uniqueKey string) (*Object, error)
	// Count returns the number of objects of a kind in an account, whatever their parent.
	Count(ctx context.Context, kind, accountID string) (int, error)
	// CountReferrers returns the number of objects of a kind whose refs include id.
	CountReferrers(ctx context.Context, id, kind string) (int, error)
	// DeleteAccount deletes every object of an account (the account's own object among
	// them, whatever refs they hold between them), the account's events and deliveries, and
	// the shared rate buckets of the account and its objects.
	// Objects of other accounts referencing one of them make it fail (*ReferencedError).
	DeleteAccount(ctx context.Context, accountID string) error
	// AddEvent appends e to the outbox with a pending delivery, due at once, for each of
	// deliveries (see Outbox). It sets e.Seq. Only a write transaction may add events.
	AddEvent(ctx context.Context, e *Event, deliveries []NewDelivery) error
}

var (
	// ErrNotFound: no such object (or a ref to a missing object).
	ErrNotFound = errors.New("store: not found")
	// ErrExists: an object with this ID is already stored.
	ErrExists = errors.New("store: id already exists")
	// ErrUnavailable is in the error of a call that failed because the database could not
	// be reached or is not taking work now (connection refused or lost, shutting down or
	// starting up, its file locked by another process): the same call may succeed later.
	ErrUnavailable = errors.New("store: unavailable")
)

// SchemaError reports a database whose schema is older than this binary's migrations, such
// as one that another binary rolled back.
type SchemaError struct {
	Have, Want int64
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("store: the database schema is at version %d; this server needs version %d", e.Have, e.Want)
}

// DuplicateError reports a unique key that another object holds.
type DuplicateError struct {
	Key      string
	HolderID string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("store: unique key %q is held by %s", e.Key, e.HolderID)
}

// ReferencedError reports that an object cannot be deleted because others reference it.
type ReferencedError struct {
	ID          string
	ReferrerIDs []string
}

func (e *ReferencedError) Error() string {
	return fmt.Sprintf("store: %s is referenced by %v", e.ID, e.ReferrerIDs)
}

// Bucket is a token bucket: it holds at most Size tokens and gains Size tokens per Per,
// evenly.
type Bucket struct {
	Size int
	Per  time.Duration
}

// RateBuckets keeps token buckets by key.
type RateBuckets interface {
	// Take takes up to want tokens from the bucket of key at now (a bucket not seen yet is
	// full), fewer when it holds fewer whole tokens, and returns how many it took and how
	// many are left (a fraction while it refills).
	Take(ctx context.Context, key string, want int, b Bucket, now time.Time) (taken int, left float64, err error)
}

// SharedBuckets is implemented by a store that several server processes may share. Its
// RateBuckets, nil when the store serves one process only, are the same for all of them,
// so that a rate limit holds across replicas.
type SharedBuckets interface {
	RateBuckets() RateBuckets
}

// Upgrader is a store that can rewrite every object of a kind, for an upgrade of stored
// documents that needs code (a member moved to the sealed secret column).
type Upgrader interface {
	// Upgrade calls change on every object of kind, a batch per write transaction, and
	// updates those it reports changed. change must give the same result when run again on
	// its own output, and have no effects outside the object: a transaction may run twice.
	Upgrade(ctx context.Context, kind string, change func(o *Object) (changed bool, err error)) (int, error)
}
