package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestUnavailable classifies the driver's real errors: a write lock held elsewhere past the
// busy timeout (0 here, so the test does not wait) is an outage; a constraint violation and
// a syntax error are not.
func TestUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := openDB(path, "_txlock=immediate&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx := context.Background()
	if _, err := holder.Exec("CREATE TABLE t (k TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	lock, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()

	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.BeginTx(ctx, nil)
	if busy == nil || !unavailable(busy) {
		t.Fatalf("a write lock held by another connection: %v, want an unavailable store", busy)
	}

	if _, err := lock.Exec("INSERT INTO t VALUES ('a')"); err != nil {
		t.Fatal(err)
	}
	_, dup := lock.Exec("INSERT INTO t VALUES ('a')")
	_, syntax := lock.Exec("SELEC 1")
	for _, err := range []error{dup, syntax} {
		if err == nil || unavailable(err) {
			t.Fatalf("%v: classified as an unavailable store", err)
		}
	}
}
