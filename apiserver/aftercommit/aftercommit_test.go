package aftercommit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/aftercommit"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// onEachStore runs test on a new SQLite and a new PostgreSQL store.
func onEachStore(t *testing.T, test func(t *testing.T, s aftercommit.Store)) {
	open := map[string]func(ctx context.Context, t *testing.T) (store.Store, error){
		"sqlite": func(ctx context.Context, t *testing.T) (store.Store, error) {
			return sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
		},
		"postgres": func(ctx context.Context, t *testing.T) (store.Store, error) {
			return postgres.Open(ctx, pgcluster.Database(t))
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			db, err := open[name](context.Background(), t)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			test(t, aftercommit.Store{Store: db})
		})
	}
}

func object(id string) *store.Object {
	return &store.Object{Kind: "thing", ID: id, AccountID: "acc_1", Doc: []byte(`{}`)}
}

func TestCallbacksRunInOrderOnceCommitted(t *testing.T) {
	onEachStore(t, func(t *testing.T, s aftercommit.Store) {
		ctx := context.Background()
		var ran []string
		err := s.Write(ctx, func(tx store.Tx) error {
			for _, name := range []string{"first", "second"} {
				if err := aftercommit.Do(tx, func() {
					// Committed: a new transaction sees the write.
					err := s.Read(ctx, func(tx store.Tx) error { _, err := tx.Get(ctx, "thing", "th_1"); return err })
					ran = append(ran, name+" "+errString(err))
				}); err != nil {
					return err
				}
			}
			if len(ran) != 0 {
				t.Error("a callback ran before the commit")
			}
			return tx.Insert(ctx, object("th_1"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"first ok", "second ok"}; !slices.Equal(ran, want) {
			t.Fatalf("ran %q, want %q", ran, want)
		}
	})
}

func TestRolledBackRunsNone(t *testing.T) {
	onEachStore(t, func(t *testing.T, s aftercommit.Store) {
		ctx := context.Background()
		ran := false
		refused := errors.New("refused")
		err := s.Write(ctx, func(tx store.Tx) error {
			if err := aftercommit.Do(tx, func() { ran = true }); err != nil {
				return err
			}
			if err := tx.Insert(ctx, object("th_1")); err != nil {
				return err
			}
			return refused
		})
		if !errors.Is(err, refused) || ran {
			t.Fatalf("err %v, ran %v: want the refusal and no callback", err, ran)
		}
		// A write that fails in the store (a duplicate ID) runs none either.
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.Insert(ctx, object("th_2")) }); err != nil {
			t.Fatal(err)
		}
		err = s.Write(ctx, func(tx store.Tx) error {
			if err := aftercommit.Do(tx, func() { ran = true }); err != nil {
				return err
			}
			return tx.Insert(ctx, object("th_2"))
		})
		if !errors.Is(err, store.ErrExists) || ran {
			t.Fatalf("err %v, ran %v: want ErrExists and no callback", err, ran)
		}
	})
}

// TestRetriedRunsOnlyTheCommittedAttempt provokes a real serialization failure on
// PostgreSQL: two transactions each count the things and insert one, the second commits
// between the count and the insert of the first, so the first must run again; the callbacks
// of its failed attempt never run.
func TestRetriedRunsOnlyTheCommittedAttempt(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgcluster.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	s := aftercommit.Store{Store: db}
	ctx := context.Background()
	counted, otherCommitted := make(chan struct{}), make(chan struct{})
	attempts, ran := 0, []int{}
	done := make(chan error, 1)
	go func() {
		done <- s.Write(ctx, func(tx store.Tx) error {
			attempts++
			attempt := attempts
			if err := aftercommit.Do(tx, func() { ran = append(ran, attempt) }); err != nil {
				return err
			}
			if _, err := tx.Count(ctx, "thing", "acc_1"); err != nil {
				return err
			}
			if attempt == 1 {
				close(counted)
				<-otherCommitted
			}
			return tx.Insert(ctx, object("th_a"))
		})
	}()
	<-counted
	err = s.Write(ctx, func(tx store.Tx) error {
		if _, err := tx.Count(ctx, "thing", "acc_1"); err != nil {
			return err
		}
		return tx.Insert(ctx, object("th_b"))
	})
	close(otherCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if attempts < 2 || !slices.Equal(ran, []int{attempts}) {
		t.Fatalf("%d attempts ran the callbacks of attempts %v: want %d attempts or more, only the last one's run", attempts, ran, 2)
	}
}

func TestDoNeedsAWriteOfStore(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	for name, run := range map[string]func(fn func(store.Tx) error) error{
		"a write of the bare store":   func(fn func(store.Tx) error) error { return db.Write(ctx, fn) },
		"a read of aftercommit.Store": func(fn func(store.Tx) error) error { return aftercommit.Store{Store: db}.Read(ctx, fn) },
	} {
		err := run(func(tx store.Tx) error { return aftercommit.Do(tx, func() {}) })
		if !errors.Is(err, aftercommit.ErrNoHooks) {
			t.Errorf("%s: %v, want ErrNoHooks", name, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
