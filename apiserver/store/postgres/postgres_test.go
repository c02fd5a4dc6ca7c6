package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/storetest"
)

// The tests run against a throwaway PostgreSQL cluster (pgcluster) that the first test
// starts and TestMain removes afterwards. WARREN_SKIP_POSTGRES=1 skips them where PostgreSQL
// is missing.

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// freshDatabase creates an empty database and returns its DSN.
func freshDatabase(t testing.TB) string { return pgcluster.Database(t) }

func open(t *testing.T) store.Store {
	t.Helper()
	s, err := Open(context.Background(), freshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) { storetest.Run(t, open) }

// TestReopen checks that a second Open of a migrated database keeps its data.
func TestReopen(t *testing.T) {
	dsn := freshDatabase(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	obj := &store.Object{Kind: "k", ID: "k_1", AccountID: "ac_1", Doc: []byte(`{"a":1}`), UniqueKeys: []string{"u"}}
	if err := s.Write(ctx, func(tx store.Tx) error { return tx.Insert(ctx, obj) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Read(ctx, func(tx store.Tx) error {
		got, err := tx.Lookup(ctx, "u")
		if err == nil && (got.ID != "k_1" || string(got.Doc) != `{"a":1}`) {
			err = fmt.Errorf("got %+v", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkInsert(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, freshDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i := 0
	for b.Loop() {
		i++
		obj := &store.Object{Kind: "k", ID: fmt.Sprintf("k_%09d", i), AccountID: "ac_1", Doc: []byte(`{}`)}
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.Insert(ctx, obj) }); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSealing(t *testing.T) {
	storetest.Sealing(t, func(t *testing.T) string { return freshDatabase(t) }, Open)
}

// databaseAt returns a new database migrated up to version only, and a connection to it
// (closed when the test ends), to test the migrations after it on the rows it holds.
func databaseAt(t *testing.T, version int64) (dsn string, old *sql.DB) {
	t.Helper()
	dsn = freshDatabase(t)
	old, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Close() })
	p, err := migrations(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), version); err != nil {
		t.Fatal(err)
	}
	return dsn, old
}

// TestUpgradeDocJSONB: a database with objects from before migration 00007 filters them
// after it.
func TestUpgradeDocJSONB(t *testing.T) {
	dsn, old := databaseAt(t, 6)
	storetest.DocJSONBUpgrade(t, old, "BYTEA", func() store.Store {
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
