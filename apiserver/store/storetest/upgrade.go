package storetest

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// DocJSONBUpgrade checks migration 00007 (the documents' binary JSON copy that filters
// read) on a database that has objects from before it: old is that database, migrated to
// version 6 only, whose binary type is blob (BLOB, BYTEA); open opens it through the store,
// which migrates it. The objects written
// before, one updated after and one inserted after must all be found by filters on a plain
// member, on an indexed one and on a reference.
func DocJSONBUpgrade(t *testing.T, old *sql.DB, blob string, open func() store.Store) {
	ctx := context.Background()
	for _, row := range [][2]string{
		{"ip_1", `{"description":"first","metadata":"m1","owner_id":{"id":"usr_1"}}`},
		{"ip_2", `{"description":"second","metadata":"m2","owner_id":"usr_2"}`},
		{"ip_3", `{"description":"third"}`},
	} {
		if _, err := old.ExecContext(ctx, `INSERT INTO objects (id, kind, account_id, parent_id, doc) VALUES ('`+
			row[0]+`', 'ip_policy', 'acc_1', '', CAST('`+row[1]+`' AS `+blob+`))`); err != nil {
			t.Fatal(err)
		}
	}
	s := open()
	t.Cleanup(func() { s.Close() })
	write(t, s, func(tx store.Tx) error {
		o, err := tx.Get(ctx, "ip_policy", "ip_3")
		if err != nil {
			return err
		}
		o.Doc = []byte(`{"description":"third, edited","metadata":"m3"}`)
		if err := tx.Update(ctx, o); err != nil {
			return err
		}
		return tx.Insert(ctx, &store.Object{Kind: "ip_policy", ID: "ip_4", AccountID: "acc_1",
			Doc: []byte(`{"description":"fourth","metadata":"m4","owner_id":{"id":"usr_1"}}`)})
	})
	for _, tc := range []struct {
		member, value string
		want          []string
	}{
		{"description", "first", []string{"ip_1"}},
		{"description", "third", nil},
		{"description", "third, edited", []string{"ip_3"}},
		{"description", "fourth", []string{"ip_4"}},
		{"metadata", "m2", []string{"ip_2"}},
		{"metadata", "m3", []string{"ip_3"}},
		{"owner_id", "usr_1", []string{"ip_4", "ip_1"}},
		{"owner_id", "", []string{"ip_3"}},
	} {
		where := &store.Cond{Op: store.OpCompare, Cmp: "==",
			Left:  &store.Value{Kind: store.ValueMember, Path: []string{tc.member}, Type: store.Text},
			Right: &store.Value{Kind: store.ValueConst, Const: tc.value}}
		objs := read(t, s, func(ctx context.Context, tx store.Tx) ([]*store.Object, error) {
			return tx.List(ctx, store.ListQuery{Kind: "ip_policy", AccountID: "acc_1", Where: where})
		})
		var got []string
		for _, o := range objs {
			got = append(got, o.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s == %q: got %v, want %v", tc.member, tc.value, got, tc.want)
		}
	}
}
