package apiservertest

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// RetryStore is a store whose every write transaction runs twice: its first attempt fails
// after its function ran without error, where the commit would come, with the database's
// own serialization failure, so that the store's retry loop (sqlstore.Store.Write) runs it
// again as it does when concurrent writers conflict. It keeps the rest of the store's
// interface.
type RetryStore struct {
	store.Store
	failure error

	mu      sync.Mutex
	retried []int // attempts of each write whose first attempt was made to fail
}

// RetryEachWrite wraps s; failure is the error its database gives for a serialization
// failure (SQLiteSerializationFailure, PostgresSerializationFailure).
func RetryEachWrite(s store.Store, failure error) *RetryStore {
	return &RetryStore{Store: s, failure: failure}
}

// RetryOn is an Opener of a RetryStore on what open opens.
func RetryOn(open Opener, failure error) Opener {
	return func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		s, err := open(ctx, seal)
		if err != nil {
			return nil, err
		}
		return RetryEachWrite(s, failure), nil
	}
}

// Write implements store.Store.
func (s *RetryStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	attempts, failed := 0, false
	err := s.Store.Write(ctx, func(tx store.Tx) error {
		attempts++
		if err := fn(tx); err != nil {
			return err
		}
		if !failed {
			failed = true
			return s.failure
		}
		return nil
	})
	if failed {
		s.mu.Lock()
		s.retried = append(s.retried, attempts)
		s.mu.Unlock()
	}
	return err
}

// RateBuckets keeps the store's shared rate buckets (store.SharedBuckets), if it has them.
func (s *RetryStore) RateBuckets() store.RateBuckets {
	if shared, ok := s.Store.(store.SharedBuckets); ok {
		return shared.RateBuckets()
	}
	return nil
}

// Retried returns how many attempts each write transaction took whose first attempt was
// made to fail, since the last call.
func (s *RetryStore) Retried() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.retried
	s.retried = nil
	return out
}

// PostgresSerializationFailure is what pgx returns for PostgreSQL's serialization failure.
func PostgresSerializationFailure() error {
	return &pgconn.PgError{Severity: "ERROR", Code: "40001", Message: "could not serialize access due to read/write dependencies among transactions"}
}

// SQLiteSerializationFailure makes SQLite's serialization failure happen on a database of its
// own and returns it: SQLITE_BUSY_SNAPSHOT, given to a transaction that read a snapshot
// another connection's commit has made stale and then tries to write.
func SQLiteSerializationFailure(t testing.TB) error {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "snapshot.db")+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stale, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	var n int
	for _, step := range []func() error{
		func() error { _, err := db.ExecContext(ctx, "CREATE TABLE t (x)"); return err },
		func() error { _, err := stale.ExecContext(ctx, "BEGIN"); return err },
		func() error { return stale.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n) },
		func() error { _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (1)"); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = stale.ExecContext(ctx, "INSERT INTO t VALUES (2)")
	_, _ = stale.ExecContext(ctx, "ROLLBACK")
	if err == nil {
		t.Fatal("SQLite took a write on a stale snapshot")
	}
	return err
}
