// Package storetest is the contract test suite that every store.Store implementation passes.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// Run runs the suite. open returns a new, empty store for one subtest; Run closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"KindMismatch", testKindMismatch},
		{"GetWith", testGetWith},
		{"DuplicateID", testDuplicateID},
		{"UniqueKeys", testUniqueKeys},
		{"Refs", testRefs},
		{"FailedOpsLeaveNothing", testFailedOpsLeaveNothing},
		{"List", testList},
		{"Count", testCount},
		{"WriteRollback", testWriteRollback},
		{"ReadSnapshot", testReadSnapshot},
		{"ReadOnly", testReadOnly},
		{"SerializableWrites", testSerializableWrites},
		{"DeleteInsertRefRace", testDeleteInsertRefRace},
		{"UniqueKeyRace", testUniqueKeyRace},
		{"OutboxAtomic", testOutboxAtomic},
		{"OutboxClaimOrder", testOutboxClaimOrder},
		{"OutboxLease", testOutboxLease},
		{"OutboxQueries", testOutboxQueries},
		{"OutboxPrune", testOutboxPrune},
		{"OutboxConcurrentClaims", testOutboxConcurrentClaims},
		{"OutboxPending", testOutboxPending},
		{"Ready", testReady},
		{"RoutingRevision", testRoutingRevision},
		{"RoutingConcurrent", testRoutingConcurrent},
		{"OnCommit", testOnCommit},
		{"ListAllAccounts", testListAllAccounts},
		{"DeleteAccount", testDeleteAccount},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// testReady: a freshly opened store answers and has every migration.
func testReady(t *testing.T, s store.Store) {
	if err := s.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}

const (
	acct  = "ac_0001"
	acct2 = "ac_0002"
	kind  = "thing"
	kind2 = "other"
)

// obj returns an object of kind in acct with a doc naming its ID.
func obj(id string) *store.Object {
	return &store.Object{Kind: kind, ID: id, AccountID: acct, Doc: []byte(`{"id":"` + id + `"}`)}
}

func withKeys(o *store.Object, keys ...string) *store.Object { o.UniqueKeys = keys; return o }
func withRefs(o *store.Object, refs ...string) *store.Object { o.Refs = refs; return o }

func write(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Write(t.Context(), fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// try runs one operation in its own Write and returns its error.
func try(t *testing.T, s store.Store, op func(context.Context, store.Tx) error) error {
	return s.Write(t.Context(), func(tx store.Tx) error { return op(t.Context(), tx) })
}

func insert(t *testing.T, s store.Store, objs ...*store.Object) {
	t.Helper()
	write(t, s, func(tx store.Tx) error {
		for _, o := range objs {
			if err := tx.Insert(t.Context(), o); err != nil {
				return fmt.Errorf("insert %s: %w", o.ID, err)
			}
		}
		return nil
	})
}

func insertErr(t *testing.T, s store.Store, o *store.Object) error {
	return try(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Insert(ctx, o) })
}

func updateErr(t *testing.T, s store.Store, o *store.Object) error {
	return try(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Update(ctx, o) })
}

func deleteErr(t *testing.T, s store.Store, kind, id string) error {
	return try(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Delete(ctx, kind, id) })
}

// read runs fn in a Read and fails the test on error.
func read[T any](t *testing.T, s store.Store, fn func(context.Context, store.Tx) (T, error)) T {
	t.Helper()
	v, err := readErr(t, s, fn)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return v
}

func readErr[T any](t *testing.T, s store.Store, fn func(context.Context, store.Tx) (T, error)) (T, error) {
	var v T
	err := s.Read(t.Context(), func(tx store.Tx) error {
		var err error
		v, err = fn(t.Context(), tx)
		return err
	})
	return v, err
}

func get(t *testing.T, s store.Store, kind, id string) (*store.Object, error) {
	return readErr(t, s, func(ctx context.Context, tx store.Tx) (*store.Object, error) { return tx.Get(ctx, kind, id) })
}

func lookup(t *testing.T, s store.Store, key string) (*store.Object, error) {
	return readErr(t, s, func(ctx context.Context, tx store.Tx) (*store.Object, error) { return tx.Lookup(ctx, key) })
}

func list(t *testing.T, s store.Store, q store.ListQuery) []*store.Object {
	t.Helper()
	return read(t, s, func(ctx context.Context, tx store.Tx) ([]*store.Object, error) { return tx.List(ctx, q) })
}

func referrers(t *testing.T, s store.Store, id string) []*store.Object {
	t.Helper()
	return read(t, s, func(ctx context.Context, tx store.Tx) ([]*store.Object, error) { return tx.Referrers(ctx, id) })
}

func count(t *testing.T, s store.Store, kind, accountID string) int {
	t.Helper()
	return read(t, s, func(ctx context.Context, tx store.Tx) (int, error) { return tx.Count(ctx, kind, accountID) })
}

// mustGet returns the stored object and checks it equals want.
func mustGet(t *testing.T, s store.Store, want *store.Object) *store.Object {
	t.Helper()
	got, err := get(t, s, want.Kind, want.ID)
	if err != nil {
		t.Fatalf("Get %s: %v", want.ID, err)
	}
	checkObject(t, got, want)
	return got
}

func mustNotFound(t *testing.T, s store.Store, kind, id string) {
	t.Helper()
	if o, err := get(t, s, kind, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get %s %s = %v, %v; want ErrNotFound", kind, id, o, err)
	}
}

// checkObject compares every field; unique keys and refs are sets.
func checkObject(t *testing.T, got, want *store.Object) {
	t.Helper()
	if got.Kind != want.Kind || got.ID != want.ID || got.AccountID != want.AccountID || got.ParentID != want.ParentID {
		t.Errorf("got %s %s (account %q, parent %q), want %s %s (account %q, parent %q)",
			got.Kind, got.ID, got.AccountID, got.ParentID, want.Kind, want.ID, want.AccountID, want.ParentID)
	}
	if !bytes.Equal(got.Doc, want.Doc) {
		t.Errorf("%s: doc = %q, want %q", want.ID, got.Doc, want.Doc)
	}
	if !bytes.Equal(got.Secret, want.Secret) {
		t.Errorf("%s: secret = %q, want %q", want.ID, got.Secret, want.Secret)
	}
	if g, w := sorted(got.UniqueKeys), sorted(want.UniqueKeys); !slices.Equal(g, w) {
		t.Errorf("%s: unique keys = %q, want %q", want.ID, g, w)
	}
	if g, w := sorted(got.Refs), sorted(want.Refs); !slices.Equal(g, w) {
		t.Errorf("%s: refs = %q, want %q", want.ID, g, w)
	}
}

func sorted(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }

func idsOf(objs []*store.Object) []string {
	ids := make([]string, len(objs))
	for i, o := range objs {
		ids[i] = o.ID
	}
	return ids
}

func checkIDs(t *testing.T, what string, got []*store.Object, want ...string) {
	t.Helper()
	if g := idsOf(got); !slices.Equal(g, want) {
		t.Errorf("%s = %q, want %q", what, g, want)
	}
}

func checkDuplicate(t *testing.T, err error, key, holder string) {
	t.Helper()
	var dup *store.DuplicateError
	if !errors.As(err, &dup) || dup.Key != key || dup.HolderID != holder {
		t.Errorf("err = %v, want DuplicateError{%q, %q}", err, key, holder)
	}
}

func checkReferenced(t *testing.T, err error, id string, referrers ...string) {
	t.Helper()
	var ref *store.ReferencedError
	if !errors.As(err, &ref) || ref.ID != id || !slices.Equal(sorted(ref.ReferrerIDs), sorted(referrers)) {
		t.Errorf("err = %v, want ReferencedError{%q, %q}", err, id, referrers)
	}
}

func checkIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

func testRoundTrip(t *testing.T, s store.Store) {
	o := &store.Object{
		Kind: kind, ID: "t_0001", AccountID: acct, ParentID: "p_0001",
		Doc:        []byte(`{"name":"a","nested":{"x":[1,2.50,"é"]}}`),
		Secret:     []byte{0, 1, 0xfe, 0xff, '\n', 0}, // not UTF-8, with NULs
		UniqueKeys: []string{"name:a", "fp:1"},
	}
	insert(t, s, obj("t_0000"))
	o.Refs = []string{"t_0000"}
	insert(t, s, o)
	mustGet(t, s, o)

	// Account and parent never change on Update.
	upd := *o
	upd.AccountID, upd.ParentID = acct2, ""
	upd.Doc, upd.Secret = []byte(`{"name":"b"}`), nil
	upd.UniqueKeys, upd.Refs = []string{"name:b"}, nil
	write(t, s, func(tx store.Tx) error { return tx.Update(t.Context(), &upd) })
	upd.AccountID, upd.ParentID = o.AccountID, o.ParentID
	mustGet(t, s, &upd)

	checkIs(t, "Update missing", updateErr(t, s, obj("t_0009")), store.ErrNotFound)

	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, o.ID) })
	mustNotFound(t, s, kind, o.ID)
	checkIs(t, "Delete again", deleteErr(t, s, kind, o.ID), store.ErrNotFound)
	checkIs(t, "Update deleted", updateErr(t, s, &upd), store.ErrNotFound)
}

// testGetWith: an object, what its refs name, the holder of its account's key and its
// account, in one call.
func testGetWith(t *testing.T, s store.Store) {
	account := &store.Object{Kind: "account", ID: acct, AccountID: acct, Doc: []byte(`{}`)}
	insert(t, s, account)
	owner, other := obj("t_0001"), obj("t_0002")
	holder := withKeys(obj("t_0003"), "x:"+acct+":api", "y")
	elsewhere := withKeys(obj("t_0004"), "x:acct_other:api")
	elsewhere.AccountID = "acct_other"
	key := withRefs(obj("t_0005"), owner.ID, other.ID)
	lone := obj("t_0006")
	insert(t, s, owner, other, holder, elsewhere, key, lone)
	type got struct {
		obj  *store.Object
		with []*store.Object
	}
	getWith := func(kind, id string, k store.AccountKey) (got, error) {
		return readErr(t, s, func(ctx context.Context, tx store.Tx) (got, error) {
			o, with, err := tx.GetWith(ctx, kind, id, k)
			return got{o, with}, err
		})
	}
	g, err := getWith(kind, key.ID, store.AccountKey{Prefix: "x:", Suffix: ":api"})
	if err != nil {
		t.Fatalf("GetWith: %v", err)
	}
	checkObject(t, g.obj, withRefs(obj(key.ID))) // without its keys and refs
	slices.SortFunc(g.with, func(a, b *store.Object) int { return strings.Compare(a.ID, b.ID) })
	checkIDs(t, "with", g.with, account.ID, owner.ID, other.ID, holder.ID)
	checkObject(t, g.with[3], obj(holder.ID))

	// No refs, no key held: the object and its account.
	g, err = getWith(kind, lone.ID, store.AccountKey{Prefix: "z:", Suffix: ":api"})
	if err != nil {
		t.Fatalf("GetWith lone: %v", err)
	}
	checkObject(t, g.obj, lone)
	checkIDs(t, "with of lone", g.with, account.ID)

	// The account itself: not its own account besides.
	g, err = getWith("account", account.ID, store.AccountKey{Prefix: "z:", Suffix: ":api"})
	if err != nil {
		t.Fatalf("GetWith account: %v", err)
	}
	checkIDs(t, "with of the account", g.with)

	// No account object stored: the object without it.
	g, err = getWith(kind, elsewhere.ID, store.AccountKey{Prefix: "z:", Suffix: ":api"})
	if err != nil {
		t.Fatalf("GetWith elsewhere: %v", err)
	}
	checkIDs(t, "with of an object of an account not stored", g.with)

	for _, tt := range []struct{ kind, id string }{{kind, "t_9999"}, {kind2, key.ID}} {
		if _, err := getWith(tt.kind, tt.id, store.AccountKey{Prefix: "x:", Suffix: ":api"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetWith %s %s: err = %v, want ErrNotFound", tt.kind, tt.id, err)
		}
	}
}

func testKindMismatch(t *testing.T, s store.Store) {
	o := obj("t_0001")
	insert(t, s, o)
	mustNotFound(t, s, kind2, o.ID)

	other := *o
	other.Kind = kind2
	checkIs(t, "Update as other kind", updateErr(t, s, &other), store.ErrNotFound)
	checkIs(t, "Delete as other kind", deleteErr(t, s, kind2, o.ID), store.ErrNotFound)
	mustGet(t, s, o)
}

func testDuplicateID(t *testing.T, s store.Store) {
	o := withKeys(obj("t_0001"), "k1")
	insert(t, s, o)
	dup := withKeys(obj("t_0001"), "k2")
	dup.Doc = []byte(`{"dup":true}`)
	checkIs(t, "Insert same ID", insertErr(t, s, dup), store.ErrExists)
	dup.Kind = kind2 // IDs are unique across kinds
	checkIs(t, "Insert same ID, other kind", insertErr(t, s, dup), store.ErrExists)
	mustGet(t, s, o)
	if _, err := lookup(t, s, "k2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup k2 after failed insert: err = %v, want ErrNotFound", err)
	}
}

func testUniqueKeys(t *testing.T, s store.Store) {
	a := withKeys(obj("t_0001"), "k1", "k2")
	insert(t, s, a)

	got, err := lookup(t, s, "k2")
	if err != nil {
		t.Fatalf("Lookup k2: %v", err)
	}
	checkObject(t, got, a)
	if _, err := lookup(t, s, "k9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup k9: err = %v, want ErrNotFound", err)
	}

	checkDuplicate(t, insertErr(t, s, withKeys(obj("t_0002"), "k0", "k2")), "k2", a.ID)
	other := withKeys(obj("t_0003"), "k0", "k2")
	other.Kind, other.AccountID = kind2, acct2 // keys are global
	checkDuplicate(t, insertErr(t, s, other), "k2", a.ID)
	mustNotFound(t, s, kind, "t_0002")

	// Updating with its own keys is fine; listing a key twice too.
	a.UniqueKeys = []string{"k2", "k1", "k2"}
	write(t, s, func(tx store.Tx) error { return tx.Update(t.Context(), a) })
	mustGet(t, s, a)

	// Update replaces the keys: k1 is freed, k3 claimed, k2 kept.
	a.UniqueKeys = []string{"k2", "k3"}
	write(t, s, func(tx store.Tx) error { return tx.Update(t.Context(), a) })
	if _, err := lookup(t, s, "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup freed k1: err = %v, want ErrNotFound", err)
	}
	b := withKeys(obj("t_0004"), "k1")
	insert(t, s, b)
	checkDuplicate(t, insertErr(t, s, withKeys(obj("t_0005"), "k3")), "k3", a.ID)

	// Another object's update cannot take a held key.
	b.UniqueKeys = []string{"k1", "k2"}
	checkDuplicate(t, updateErr(t, s, b), "k2", a.ID)
	b.UniqueKeys = []string{"k1"}
	mustGet(t, s, b)

	// Delete releases the keys.
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, a.ID) })
	c := withKeys(obj("t_0006"), "k2", "k3")
	insert(t, s, c)
	got, err = lookup(t, s, "k3")
	if err != nil {
		t.Fatalf("Lookup k3: %v", err)
	}
	checkObject(t, got, c)
}

func testRefs(t *testing.T, s store.Store) {
	x, y := obj("t_0001"), obj("t_0002")
	y.Kind = kind2 // refs cross kinds
	insert(t, s, x, y)

	checkIs(t, "Insert with missing ref", insertErr(t, s, withRefs(obj("t_0003"), x.ID, "t_0099")), store.ErrNotFound)
	mustNotFound(t, s, kind, "t_0003")

	a := withRefs(obj("t_0010"), x.ID, x.ID) // a duplicate ref is one ref
	b := withRefs(obj("t_0011"), x.ID, y.ID)
	insert(t, s, a, b)
	mustGet(t, s, a)
	mustGet(t, s, b)

	checkIDs(t, "Referrers x", referrers(t, s, x.ID), b.ID, a.ID)
	checkIDs(t, "Referrers y", referrers(t, s, y.ID), b.ID)
	checkIDs(t, "Referrers of an unreferenced object", referrers(t, s, a.ID))
	checkIDs(t, "Referrers of a missing ID", referrers(t, s, "t_0099"))
	for _, c := range []struct {
		id, kind string
		want     int
	}{{x.ID, kind, 2}, {x.ID, kind2, 0}, {y.ID, kind, 1}, {a.ID, kind, 0}, {"t_0099", kind, 0}} {
		if n := read(t, s, func(ctx context.Context, tx store.Tx) (int, error) { return tx.CountReferrers(ctx, c.id, c.kind) }); n != c.want {
			t.Errorf("CountReferrers(%s, %s) = %d, want %d", c.id, c.kind, n, c.want)
		}
	}

	checkReferenced(t, deleteErr(t, s, kind, x.ID), x.ID, a.ID, b.ID)
	checkReferenced(t, deleteErr(t, s, kind2, y.ID), y.ID, b.ID)
	checkIs(t, "Delete referenced object as other kind", deleteErr(t, s, kind2, x.ID), store.ErrNotFound)

	a.Refs = []string{y.ID, "t_0099"}
	checkIs(t, "Update with missing ref", updateErr(t, s, a), store.ErrNotFound)
	a.Refs = []string{x.ID}
	mustGet(t, s, a)

	// Dropping the ref by update, then deleting the other referrer, frees x.
	a.Refs = []string{y.ID}
	write(t, s, func(tx store.Tx) error { return tx.Update(t.Context(), a) })
	checkIDs(t, "Referrers x after update", referrers(t, s, x.ID), b.ID)
	if n := read(t, s, func(ctx context.Context, tx store.Tx) (int, error) { return tx.CountReferrers(ctx, x.ID, kind) }); n != 1 {
		t.Errorf("CountReferrers x after update = %d, want 1", n)
	}
	checkReferenced(t, deleteErr(t, s, kind, x.ID), x.ID, b.ID)
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, b.ID) })
	checkIDs(t, "Referrers x after delete", referrers(t, s, x.ID))
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, x.ID) })
	mustNotFound(t, s, kind, x.ID)
	checkReferenced(t, deleteErr(t, s, kind2, y.ID), y.ID, a.ID)
}

// testFailedOpsLeaveNothing checks that a failed Insert or Update changes nothing, even when
// fn handles the error and commits the rest of its transaction.
func testFailedOpsLeaveNothing(t *testing.T, s store.Store) {
	x := obj("t_0001")
	a := withRefs(withKeys(obj("t_0002"), "a1"), x.ID)
	insert(t, s, x, a, withKeys(obj("t_0003"), "held"))

	// Each operation fails after doing part of its work (new keys sort around the held one).
	ops := []struct {
		name string
		o    *store.Object
		dup  bool // fails with *DuplicateError, else ErrNotFound
	}{
		{"Insert, key taken", withKeys(obj("t_0010"), "a_new1", "held", "z_new1"), true},
		{"Insert, missing ref", withRefs(withKeys(obj("t_0011"), "new2"), x.ID, "t_0099"), false},
		{"Update, key taken", withKeys(obj(a.ID), "a_new3", "held", "z_new3"), true},
		{"Update, missing ref", withRefs(withKeys(obj(a.ID), "new4"), "t_0099"), false},
	}
	for _, op := range ops {
		op.o.Doc = []byte(`{"changed":true}`)
		write(t, s, func(tx store.Tx) error {
			var err error
			if op.o.ID == a.ID {
				err = tx.Update(t.Context(), op.o)
			} else {
				err = tx.Insert(t.Context(), op.o)
			}
			var dup *store.DuplicateError
			if op.dup && !errors.As(err, &dup) || !op.dup && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: err = %v", op.name, err)
			}
			return nil // commit whatever the failed operation left
		})
	}
	mustNotFound(t, s, kind, "t_0010")
	mustNotFound(t, s, kind, "t_0011")
	mustGet(t, s, a)
	for _, key := range []string{"a_new1", "z_new1", "new2", "a_new3", "z_new3", "new4"} {
		if _, err := lookup(t, s, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Lookup %s: err = %v, want ErrNotFound", key, err)
		}
	}
	checkIDs(t, "Referrers x", referrers(t, s, x.ID), a.ID)
}

func testList(t *testing.T, s store.Store) {
	var want []string // top-level objects of kind in acct, descending
	var objs []*store.Object
	for i := range 10 {
		o := obj(fmt.Sprintf("t_%04d", 100-i*3))
		objs = append(objs, o)
		want = append(want, o.ID)
	}
	noise := []*store.Object{
		{Kind: kind2, ID: "t_0050", AccountID: acct},
		{Kind: kind, ID: "t_0051", AccountID: acct2},
		{Kind: kind, ID: "t_0052", AccountID: acct, ParentID: "p_0001"},
		{Kind: kind, ID: "t_0053", AccountID: acct, ParentID: "p_0002"},
		{Kind: kind, ID: "t_0054", AccountID: acct, ParentID: "p_0001"},
	}
	// Insert out of order so that order comes from IDs, not insertion.
	insert(t, s, noise[2:]...)
	insert(t, s, objs[5:]...)
	insert(t, s, noise[:2]...)
	withRefs(withKeys(objs[0], "k:list0"), "t_0050")
	withKeys(objs[1], "k:list1a", "k:list1b")
	insert(t, s, objs[:5]...)

	top := store.ListQuery{Kind: kind, AccountID: acct}
	got := list(t, s, top)
	checkIDs(t, "List", got, want...)
	for i, o := range got {
		checkObject(t, o, objs[i])
	}
	// DocsOnly: the same objects, without their keys and refs.
	docsOnly := top
	docsOnly.DocsOnly = true
	got = list(t, s, docsOnly)
	checkIDs(t, "List DocsOnly", got, want...)
	for i, o := range got {
		bare := *objs[i]
		bare.UniqueKeys, bare.Refs = nil, nil
		checkObject(t, o, &bare)
	}
	checkIDs(t, "List other kind", list(t, s, store.ListQuery{Kind: kind2, AccountID: acct}), "t_0050")
	checkIDs(t, "List other account", list(t, s, store.ListQuery{Kind: kind, AccountID: acct2}), "t_0051")
	checkIDs(t, "List children", list(t, s, store.ListQuery{Kind: kind, AccountID: acct, ParentID: "p_0001"}), "t_0054", "t_0052")
	checkIDs(t, "List empty account", list(t, s, store.ListQuery{Kind: kind, AccountID: "ac_0099"}))

	q := top
	q.Limit = 3
	checkIDs(t, "List limit", list(t, s, q), want[:3]...)
	q.BeforeID = want[3]
	checkIDs(t, "List before a stored ID", list(t, s, q), want[4:7]...)
	q.BeforeID, q.Limit = "t_0090", 0 // not a stored ID
	checkIDs(t, "List before an unstored ID", list(t, s, q), want[4:]...)
	q.BeforeID = want[len(want)-1]
	checkIDs(t, "List before the last", list(t, s, q))

	// Paging through with BeforeID and Limit visits every object once.
	var paged []string
	for q := (store.ListQuery{Kind: kind, AccountID: acct, Limit: 4}); ; {
		page := list(t, s, q)
		if len(page) == 0 {
			break
		}
		paged = append(paged, idsOf(page)...)
		q.BeforeID = page[len(page)-1].ID
	}
	if !slices.Equal(paged, want) {
		t.Errorf("paged = %q, want %q", paged, want)
	}
}

func testCount(t *testing.T, s store.Store) {
	if n := count(t, s, kind, acct); n != 0 {
		t.Errorf("Count of empty store = %d", n)
	}
	child := obj("t_0003")
	child.ParentID = "t_0001"
	other := obj("t_0004")
	other.AccountID = acct2
	insert(t, s, obj("t_0001"), obj("t_0002"), child, other, &store.Object{Kind: kind2, ID: "t_0005", AccountID: acct})
	for _, c := range []struct {
		kind, account string
		want          int
	}{{kind, acct, 3}, {kind, acct2, 1}, {kind2, acct, 1}, {kind2, acct2, 0}} {
		if n := count(t, s, c.kind, c.account); n != c.want {
			t.Errorf("Count(%s, %s) = %d, want %d", c.kind, c.account, n, c.want)
		}
	}
	write(t, s, func(tx store.Tx) error { return tx.Delete(t.Context(), kind, "t_0002") })
	if n := count(t, s, kind, acct); n != 2 {
		t.Errorf("Count after delete = %d, want 2", n)
	}
}

func testWriteRollback(t *testing.T, s store.Store) {
	x, y := withKeys(obj("t_0001"), "x"), obj("t_0002")
	insert(t, s, x, y)
	boom := errors.New("boom")
	err := s.Write(t.Context(), func(tx store.Tx) error {
		ctx := t.Context()
		if err := tx.Insert(ctx, withRefs(withKeys(obj("t_0003"), "new"), x.ID)); err != nil {
			return err
		}
		changed := withKeys(obj(x.ID), "x2")
		changed.Doc = []byte(`{"changed":true}`)
		if err := tx.Update(ctx, changed); err != nil {
			return err
		}
		if err := tx.Delete(ctx, kind, y.ID); err != nil {
			return err
		}
		// The transaction sees its own changes.
		if _, err := tx.Get(ctx, kind, "t_0003"); err != nil {
			return err
		}
		if _, err := tx.Get(ctx, kind, y.ID); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("Get deleted in tx: %v", err)
		}
		return boom
	})
	checkIs(t, "Write", err, boom)
	mustNotFound(t, s, kind, "t_0003")
	mustGet(t, s, x)
	mustGet(t, s, y)
	if _, err := lookup(t, s, "new"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Lookup key of rolled-back insert: err = %v", err)
	}
	checkIDs(t, "Referrers x", referrers(t, s, x.ID))
}

// testReadSnapshot checks that Read sees committed data, and only what was committed when it
// started.
func testReadSnapshot(t *testing.T, s store.Store) {
	x := obj("t_0001")
	insert(t, s, x)
	changed := obj(x.ID)
	changed.Doc = []byte(`{"v":2}`)
	err := s.Read(t.Context(), func(tx store.Tx) error {
		ctx := t.Context()
		if _, err := tx.Get(ctx, kind, x.ID); err != nil {
			return err
		}
		write(t, s, func(tx store.Tx) error {
			if err := tx.Update(ctx, changed); err != nil {
				return err
			}
			return tx.Insert(ctx, obj("t_0002"))
		})
		got, err := tx.Get(ctx, kind, x.ID)
		if err != nil {
			return err
		}
		checkObject(t, got, x)
		n, err := tx.Count(ctx, kind, acct)
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("Count in the earlier snapshot = %d, want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, changed)
	mustGet(t, s, obj("t_0002"))
}

func testReadOnly(t *testing.T, s store.Store) {
	err := s.Read(t.Context(), func(tx store.Tx) error { return tx.Insert(t.Context(), obj("t_0001")) })
	if err == nil {
		t.Error("Insert in Read succeeded")
	}
	mustNotFound(t, s, kind, "t_0001")
}

// testSerializableWrites increments a counter from concurrent read-modify-write transactions;
// a lost update shows as a final count below n.
func testSerializableWrites(t *testing.T, s store.Store) {
	const n = 20
	counter := obj("t_0001")
	counter.Doc = []byte("0")
	insert(t, s, counter)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := s.Write(t.Context(), func(tx store.Tx) error {
				o, err := tx.Get(t.Context(), kind, counter.ID)
				if err != nil {
					return err
				}
				v, err := strconv.Atoi(string(o.Doc))
				if err != nil {
					return err
				}
				o.Doc = strconv.AppendInt(nil, int64(v+1), 10)
				return tx.Update(t.Context(), o)
			})
			if err != nil {
				t.Errorf("increment: %v", err)
			}
		})
	}
	wg.Wait()
	counter.Doc = []byte(strconv.Itoa(n))
	mustGet(t, s, counter)
}

// testDeleteInsertRefRace races deleting an object against inserting a reference to it: exactly
// one of them wins, and no reference is left dangling.
func testDeleteInsertRefRace(t *testing.T, s store.Store) {
	const rounds = 40
	target := func(i int) string { return fmt.Sprintf("t_%04d", i) }
	referrer := func(i int) string { return fmt.Sprintf("r_%04d", i) }
	for i := range rounds {
		insert(t, s, obj(target(i)))
	}
	var wg sync.WaitGroup
	for i := range rounds {
		var delErr, insErr error
		wg.Go(func() {
			var inner sync.WaitGroup
			inner.Go(func() { delErr = deleteErr(t, s, kind, target(i)) })
			inner.Go(func() { insErr = insertErr(t, s, withRefs(obj(referrer(i)), target(i))) })
			inner.Wait()
			var ref *store.ReferencedError
			switch {
			case delErr == nil && errors.Is(insErr, store.ErrNotFound):
			case insErr == nil && errors.As(delErr, &ref) && slices.Equal(ref.ReferrerIDs, []string{referrer(i)}):
			default:
				t.Errorf("round %d: delete: %v, insert: %v; want exactly one to fail", i, delErr, insErr)
			}
		})
	}
	wg.Wait()
	for i := range rounds {
		_, tErr := get(t, s, kind, target(i))
		r, rErr := get(t, s, kind, referrer(i))
		if rErr == nil && (tErr != nil || !slices.Equal(r.Refs, []string{target(i)})) {
			t.Errorf("round %d: %s references %s, which reads %v", i, referrer(i), target(i), tErr)
		}
	}
}

// testUniqueKeyRace races inserts of objects that claim one unique key (and reference one
// object): exactly one is stored, every other fails with the *DuplicateError that names it
// and leaves nothing behind.
func testUniqueKeyRace(t *testing.T, s store.Store) {
	const n = 8
	x := obj("t_0001")
	insert(t, s, x)
	errs := make([]error, n)
	racer := func(i int) *store.Object {
		return withRefs(withKeys(obj(fmt.Sprintf("t_%04d", 100+i)), "race", fmt.Sprintf("own_%d", i)), x.ID)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = insertErr(t, s, racer(i)) })
	}
	wg.Wait()
	var winner string
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("both %s and %s claimed the key", winner, racer(i).ID)
			}
			winner = racer(i).ID
		}
	}
	if winner == "" {
		t.Fatalf("no insert won: %v", errs)
	}
	for i, err := range errs {
		if racer(i).ID == winner {
			continue
		}
		var dup *store.DuplicateError
		if !errors.As(err, &dup) || dup.Key != "race" || dup.HolderID != winner {
			t.Errorf("insert %d: err = %v, want the key held by %s", i, err, winner)
		}
		mustNotFound(t, s, kind, racer(i).ID)
		if _, err := lookup(t, s, fmt.Sprintf("own_%d", i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the loser %d kept its key: %v", i, err)
		}
	}
	checkIDs(t, "Referrers x", referrers(t, s, x.ID), winner)
}
