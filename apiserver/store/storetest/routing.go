package storetest

import (
	"context"
	"errors"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"slices"
	"sync"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// routingKind is a kind of kinds.Routing.
const routingKind = kinds.HTTPSEdge

func routing(t *testing.T, s store.Store) store.Routing {
	t.Helper()
	r, ok := s.(store.Routing)
	if !ok {
		t.Fatalf("%T does not implement store.Routing", s)
	}
	return r
}

func revision(t *testing.T, r store.Routing) int64 {
	t.Helper()
	rev, err := r.Revision(t.Context())
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

// testRoutingRevision: a committed write of a routing kind moves the revision, once per
// transaction; other kinds, rolled-back writes and reads leave it alone.
func testRoutingRevision(t *testing.T, s store.Store) {
	r := routing(t, s)
	rev := revision(t, r)
	// by: how far the revision moves (once per account written, whatever the writes).
	step := func(what string, by int64, fn func(context.Context, store.Tx) error) {
		t.Helper()
		_ = try(t, s, fn)
		if got := revision(t, r); got != rev+by {
			t.Fatalf("%s: revision %d after %d, want it moved by %d", what, got, rev, by)
		}
		rev += by
	}
	edge := func(id string) *store.Object {
		return &store.Object{Kind: routingKind, ID: id, AccountID: acct, Doc: []byte(`{}`)}
	}
	step("a write of another kind", 0, func(ctx context.Context, tx store.Tx) error { return tx.Insert(ctx, obj("t_0001")) })
	step("an insert", 1, func(ctx context.Context, tx store.Tx) error { return tx.Insert(ctx, edge("e_0001")) })
	step("two inserts in one transaction", 1, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.Insert(ctx, edge("e_0002")), tx.Insert(ctx, edge("e_0003")))
	})
	step("an insert in another account", 1, func(ctx context.Context, tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: routingKind, ID: "e_0009", AccountID: acct2, Doc: []byte(`{}`)})
	})
	step("writes in two accounts in one transaction", 2, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.Delete(ctx, routingKind, "e_0009"), tx.Update(ctx, edge("e_0003")))
	})
	step("an update", 1, func(ctx context.Context, tx store.Tx) error { return tx.Update(ctx, edge("e_0001")) })
	step("a delete", 1, func(ctx context.Context, tx store.Tx) error { return tx.Delete(ctx, routingKind, "e_0002") })
	step("a rolled-back write", 0, func(ctx context.Context, tx store.Tx) error {
		if err := tx.Insert(ctx, edge("e_0004")); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	step("a failed insert", 0, func(ctx context.Context, tx store.Tx) error { return tx.Insert(ctx, edge("e_0001")) })
	if err := s.Read(t.Context(), func(tx store.Tx) error { _, err := tx.Get(t.Context(), routingKind, "e_0001"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := revision(t, r); got != rev {
		t.Fatalf("a read moved the revision to %d from %d", got, rev)
	}
}

// testRoutingConcurrent: routing writes at once all commit (a serialization conflict on the
// counter runs one again) and each moves the revision.
func testRoutingConcurrent(t *testing.T, s store.Store) {
	r := routing(t, s)
	rev := revision(t, r)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- s.Write(t.Context(), func(tx store.Tx) error {
				return tx.Insert(t.Context(), &store.Object{Kind: routingKind, ID: fmt.Sprintf("e_%04d", i), AccountID: acct, Doc: []byte(`{}`)})
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent routing write: %v", err)
		}
	}
	if got := revision(t, r); got != rev+n {
		t.Fatalf("revision %d after %d writes from %d", got, n, rev)
	}
}

// testOnCommit: the hooks hear of each committed write with the kinds it wrote, and of
// nothing else.
func testOnCommit(t *testing.T, s store.Store) {
	r := routing(t, s)
	var mu sync.Mutex
	var heard [][]string
	r.OnCommit(func(kinds []string) { mu.Lock(); heard = append(heard, kinds); mu.Unlock() })
	expect := func(what string, want ...[]string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !slices.EqualFunc(heard, want, slices.Equal) {
			t.Fatalf("%s: the hook heard %v, want %v", what, heard, want)
		}
		heard = nil
	}
	insert(t, s, obj("t_0001"), &store.Object{Kind: routingKind, ID: "e_0001", AccountID: acct, Doc: []byte(`{}`)}, obj("t_0002"))
	expect("an insert of two kinds", []string{routingKind, kind})
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, "t_0001") })
	expect("a delete", []string{kind})
	_ = try(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.Insert(ctx, obj("t_0003")); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	write(t, s, func(tx store.Tx) error { _, err := tx.Get(t.Context(), kind, "t_0002"); return err })
	if err := s.Read(t.Context(), func(tx store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	expect("a rollback, a write that wrote nothing and a read")
}

// testListAllAccounts: ListQuery.AllAccounts lists a kind across accounts and parents, a
// page at a time.
func testListAllAccounts(t *testing.T, s store.Store) {
	insert(t, s,
		&store.Object{Kind: kind, ID: "t_0001", AccountID: acct, Doc: []byte(`{}`)},
		&store.Object{Kind: kind, ID: "t_0002", AccountID: acct2, Doc: []byte(`{}`)},
		withKeys(&store.Object{Kind: kind, ID: "t_0003", AccountID: acct, ParentID: "p_0001", Doc: []byte(`{}`)}, "k:all"),
		&store.Object{Kind: kind2, ID: "t_0004", AccountID: acct, Doc: []byte(`{}`)},
	)
	got := list(t, s, store.ListQuery{Kind: kind, AccountID: acct2, ParentID: "p_0002", AllAccounts: true})
	checkIDs(t, "List AllAccounts", got, "t_0003", "t_0002", "t_0001")
	if got[0].ParentID != "p_0001" || got[1].AccountID != acct2 || !slices.Equal(got[0].UniqueKeys, []string{"k:all"}) {
		t.Fatalf("List AllAccounts: %+v", got)
	}
	checkIDs(t, "List AllAccounts first page", list(t, s, store.ListQuery{Kind: kind, Limit: 2, AllAccounts: true}), "t_0003", "t_0002")
	checkIDs(t, "List AllAccounts next page", list(t, s, store.ListQuery{Kind: kind, BeforeID: "t_0002", Limit: 2, AllAccounts: true}), "t_0001")
}

// testDeleteAccount: an account's objects, whatever refs they hold between them, its events
// and deliveries go in one call; another account's stay, and a ref from another account
// into it refuses the whole deletion.
func testDeleteAccount(t *testing.T, s store.Store) {
	account := &store.Object{Kind: "account", ID: acct, AccountID: acct, Doc: []byte(`{}`)}
	parent := withKeys(obj("t_0001"), "k:"+acct)
	child := withRefs(&store.Object{Kind: kind, ID: "t_0002", AccountID: acct, ParentID: parent.ID, Doc: []byte(`{}`)}, parent.ID, account.ID)
	routed := &store.Object{Kind: kinds.HTTPSEdge, ID: "t_0003", AccountID: acct, Doc: []byte(`{}`)}
	other := &store.Object{Kind: kind, ID: "t_0004", AccountID: acct2, Doc: []byte(`{}`)}
	insert(t, s, account, parent, child, routed, other)
	addEvent(t, s, "ev_1", 0, "ed_1")
	kept := &store.Event{ID: "ev_2", AccountID: acct2, Type: "ip_policy_created.v0", Time: t0, Payload: []byte(`{}`)}
	write(t, s, func(tx store.Tx) error {
		return tx.AddEvent(t.Context(), kept, []store.NewDelivery{{ID: "dl_2", DestinationID: "ed_2"}})
	})

	// A ref from another account: nothing is deleted.
	intruder := withRefs(&store.Object{Kind: kind, ID: "t_0005", AccountID: acct2, Doc: []byte(`{}`)}, parent.ID)
	insert(t, s, intruder)
	var ref *store.ReferencedError
	if err := try(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteAccount(ctx, acct) }); !errors.As(err, &ref) || !slices.Equal(ref.ReferrerIDs, []string{intruder.ID}) {
		t.Fatalf("DeleteAccount referenced from another account: err = %v, want ReferencedError by %s", err, intruder.ID)
	}
	mustGet(t, s, child)
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, intruder.ID) })

	routing := s.(store.Routing)
	var written []string
	routing.OnCommit(func(k []string) { written = k })
	before, err := routing.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, func(tx store.Tx) error { return tx.DeleteAccount(t.Context(), acct) })
	for _, o := range []*store.Object{account, parent, child, routed} {
		mustNotFound(t, s, o.Kind, o.ID)
	}
	mustGet(t, s, other)
	if _, err := lookup(t, s, "k:"+acct); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup of the deleted object's key: err = %v, want ErrNotFound", err)
	}
	if !slices.Equal(written, []string{"account", kinds.HTTPSEdge, kind}) {
		t.Errorf("OnCommit kinds = %q", written)
	}
	after, err := routing.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("the routing revision went from %d to %d; it must move on", before, after)
	}
	evs, err := s.Events(t.Context(), store.OutboxQuery{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := s.Deliveries(t.Context(), store.OutboxQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID != kept.ID || len(ds) != 1 || ds[0].ID != "dl_2" {
		t.Errorf("after DeleteAccount: events %+v, deliveries %+v; want only the other account's", evs, ds)
	}
}
