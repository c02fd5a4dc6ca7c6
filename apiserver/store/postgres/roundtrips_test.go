package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// statements records the text of every statement the store sends, each one round trip.
type statements struct {
	mu   sync.Mutex
	sent []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, strings.Join(strings.Fields(data.SQL), " "))
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// during returns the statements fn sent.
func (s *statements) during(t *testing.T, fn func() error) []string {
	t.Helper()
	s.mu.Lock()
	s.sent = nil
	s.mu.Unlock()
	if err := fn(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

func openTraced(t *testing.T, dsn string) (*Store, *statements) {
	t.Helper()
	trace := &statements{}
	s, err := OpenTraced(t.Context(), dsn, trace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, trace
}

// TestRoundTrips pins the statements of the writes a create makes: each store operation is
// one statement (no savepoints, keys and refs with their object), so that a transaction
// costs BEGIN, its operations and COMMIT, and, when it writes a routing kind (IP policies
// are one), one more that moves its account's routing revision, once per transaction.
func TestRoundTrips(t *testing.T) {
	ctx := t.Context()
	s, trace := openTraced(t, freshDatabase(t))
	policy := &store.Object{Kind: "ip_policy", ID: "ipp_1", AccountID: "ac_1", Doc: []byte(`{}`)}
	rule := &store.Object{Kind: "ip_policy_rule", ID: "ipr_1", AccountID: "ac_1", Doc: []byte(`{}`),
		UniqueKeys: []string{"cidr:ipp_1:10.0.0.0/8", "other"}, Refs: []string{"ipp_1"}}
	write := func(fn func(tx store.Tx) error) func() error {
		return func() error { return s.Write(ctx, fn) }
	}
	for _, tc := range []struct {
		name string
		fn   func() error
		want int
	}{
		{"insert without keys or refs", write(func(tx store.Tx) error { return tx.Insert(ctx, policy) }), 4},
		{"insert with keys and a ref", write(func(tx store.Tx) error { return tx.Insert(ctx, rule) }), 4},
		{"update keeping keys and refs", write(func(tx store.Tx) error { return tx.Update(ctx, rule) }), 4},
		{"insert of a kind routing does not read", write(func(tx store.Tx) error {
			return tx.Insert(ctx, &store.Object{Kind: "api_key", ID: "ak_1", AccountID: "ac_1", Doc: []byte(`{}`)})
		}), 3},
		{"two routing writes: one revision move", write(func(tx store.Tx) error {
			return errors.Join(tx.Update(ctx, policy), tx.Update(ctx, rule))
		}), 5},
		{"event without deliveries", write(func(tx store.Tx) error {
			return tx.AddEvent(ctx, &store.Event{ID: "ev_1", AccountID: "ac_1", Type: "t", Payload: []byte(`{}`)}, nil)
		}), 3},
		{"a create: insert, subscriptions, event", write(func(tx store.Tx) error {
			if err := tx.Insert(ctx, &store.Object{Kind: "ip_policy", ID: "ipp_2", AccountID: "ac_1", Doc: []byte(`{}`)}); err != nil {
				return err
			}
			if _, err := tx.List(ctx, store.ListQuery{Kind: "event_subscription", AccountID: "ac_1"}); err != nil {
				return err
			}
			return tx.AddEvent(ctx, &store.Event{ID: "ev_2", AccountID: "ac_1", Type: "t", Payload: []byte(`{}`)}, nil)
		}), 6},
		{"read by ID", func() error {
			return s.Read(ctx, func(tx store.Tx) error { _, err := tx.Get(ctx, "ip_policy_rule", "ipr_1"); return err })
		}, 3},
	} {
		if got := trace.during(t, tc.fn); len(got) != tc.want {
			t.Errorf("%s: %d statements, want %d:\n%s", tc.name, len(got), tc.want, strings.Join(got, "\n"))
		}
	}
	// The row's keys and refs are what the tables hold.
	err := s.Read(ctx, func(tx store.Tx) error {
		got, err := tx.Get(ctx, "ip_policy_rule", "ipr_1")
		if err == nil && (!slices.Equal(got.UniqueKeys, []string{"cidr:ipp_1:10.0.0.0/8", "other"}) || !slices.Equal(got.Refs, []string{"ipp_1"})) {
			t.Errorf("read %v and %v", got.UniqueKeys, got.Refs)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestObjectSetsMigration: 00006 fills key_set and ref_set of the objects stored before it
// in the form the store writes, so that their updates take the one-statement path.
func TestObjectSetsMigration(t *testing.T) {
	ctx := t.Context()
	dsn, old := databaseAt(t, 5)
	// Keys that JSON escapes, and an order that a locale's collation would change.
	keys := []string{"b", "B", "a<&>\"\\é", "_z"}
	for _, q := range []string{
		`INSERT INTO objects (id, kind, account_id, parent_id, doc) VALUES ('x_1', 'x', 'ac_1', '', '{}'), ('x_2', 'x', 'ac_1', '', '{}'), ('x_3', 'x', 'ac_1', '', '{}')`,
		`INSERT INTO unique_keys (key, object_id) VALUES ('b', 'x_1'), ('B', 'x_1'), ('a<&>"\é', 'x_1'), ('_z', 'x_1')`,
		`INSERT INTO refs (from_id, to_id) VALUES ('x_1', 'x_3'), ('x_1', 'x_2')`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()
	s, trace := openTraced(t, dsn)
	var got *store.Object
	if err := s.Read(ctx, func(tx store.Tx) (err error) { got, err = tx.Get(ctx, "x", "x_1"); return err }); err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values(keys)); !slices.Equal(got.UniqueKeys, want) || !slices.Equal(got.Refs, []string{"x_2", "x_3"}) {
		t.Fatalf("after the migration x_1 has keys %q and refs %q", got.UniqueKeys, got.Refs)
	}
	got.Doc = []byte(`{"a":1}`)
	sent := trace.during(t, func() error { return s.Write(ctx, func(tx store.Tx) error { return tx.Update(ctx, got) }) })
	if len(sent) != 3 {
		t.Errorf("an update of a migrated object sent %d statements, want 3 (BEGIN, UPDATE, COMMIT):\n%s", len(sent), strings.Join(sent, "\n"))
	}
	// x_2 is still held by x_1's ref, through the refs table.
	err := s.Write(ctx, func(tx store.Tx) error { return tx.Delete(ctx, "x", "x_2") })
	if _, ok := err.(*store.ReferencedError); !ok {
		t.Errorf("delete of a referenced object: %v", err)
	}
}
