package acme

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// onEachStore runs test on a sealed SQLite store and a sealed PostgreSQL one.
func onEachStore(t *testing.T, test func(t *testing.T, s *sqlstore.Store)) {
	keys, err := sealing.NewKeyring(sealing.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, s *sqlstore.Store, err error) *sqlstore.Store {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"), sqlstore.WithKeys(keys))
		test(t, open(t, s, err))
	})
	t.Run("postgres", func(t *testing.T) {
		s, err := postgres.Open(t.Context(), pgcluster.Database(t), sqlstore.WithKeys(keys))
		test(t, open(t, s, err))
	})
}

func TestStorage(t *testing.T) {
	onEachStore(t, func(t *testing.T, db *sqlstore.Store) {
		ctx := t.Context()
		s := NewStorage(db)
		key := "certificates/acme/example.com/example.com.key"
		value := []byte("-----BEGIN EC PRIVATE KEY-----\nsecret\n-----END EC PRIVATE KEY-----\n")

		if _, err := s.Load(ctx, key); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Load of a missing key: %v, want fs.ErrNotExist", err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Stat of a missing key: %v, want fs.ErrNotExist", err)
		}
		if s.Exists(ctx, key) {
			t.Fatal("a missing key exists")
		}
		for k, v := range map[string][]byte{
			key: value,
			"certificates/acme/example.com/example.com.crt":  []byte("cert"),
			"certificates/acme/example.com/example.com.json": []byte("{}"),
			"certificates/acme/other.test/other.test.crt":    []byte("other"),
			"acme/account.json":                              []byte("account"),
		} {
			if err := s.Store(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Load(ctx, key); err != nil || !bytes.Equal(got, value) {
			t.Fatalf("Load = %q, %v", got, err)
		}
		// The value sits sealed in the store: no private key in the clear.
		write, _ := db.DB()
		var raw []byte
		if err := write.QueryRow("SELECT secret FROM objects WHERE id = '" + idOf(ids.ACMEItem, key) + "'").Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if !sealing.Sealed(raw) || bytes.Contains(raw, []byte("PRIVATE KEY")) {
			t.Fatalf("the secret column holds %q", raw)
		}
		// Store overwrites.
		if err := s.Store(ctx, key, []byte("new")); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, key)
		if err != nil || !info.IsTerminal || info.Size != 3 || info.Key != key || info.Modified.IsZero() {
			t.Fatalf("Stat = %+v, %v", info, err)
		}
		if info, err := s.Stat(ctx, "certificates/acme"); err != nil || info.IsTerminal {
			t.Fatalf("Stat of a directory = %+v, %v", info, err)
		}
		if !s.Exists(ctx, "certificates") {
			t.Fatal("a directory does not exist")
		}

		list := func(prefix string, recursive bool, want ...string) {
			t.Helper()
			got, err := s.List(ctx, prefix, recursive)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("List(%q, %v) = %q, %v; want %q", prefix, recursive, got, err, want)
			}
		}
		list("certificates/acme", false, "certificates/acme/example.com", "certificates/acme/other.test")
		list("certificates", true, "certificates/acme", "certificates/acme/example.com",
			"certificates/acme/example.com/example.com.crt", "certificates/acme/example.com/example.com.json",
			"certificates/acme/example.com/example.com.key", "certificates/acme/other.test", "certificates/acme/other.test/other.test.crt")
		list("", false, "acme", "certificates")
		if _, err := s.List(ctx, "nothing", true); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("List of a missing prefix: %v, want fs.ErrNotExist", err)
		}

		// Delete removes a key, or a directory and everything in it; a missing key is no error.
		if err := s.Delete(ctx, "certificates/acme/example.com"); err != nil {
			t.Fatal(err)
		}
		list("certificates", true, "certificates/acme", "certificates/acme/other.test", "certificates/acme/other.test/other.test.crt")
		if err := s.Delete(ctx, "acme/account.json"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "acme/account.json"); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
		if s.Exists(ctx, "acme/account.json") || s.Exists(ctx, "acme") {
			t.Fatal("a deleted key still exists")
		}
	})
}

// TestStorageLocks checks that a lock excludes another holder sharing the database (another
// replica), and that a holder that stops renewing loses it once it expires.
func TestStorageLocks(t *testing.T) {
	onEachStore(t, func(t *testing.T, db *sqlstore.Store) {
		ctx := t.Context()
		a, b := NewStorage(db), NewStorage(db)
		for _, s := range []*Storage{a, b} {
			s.LockPoll = 10 * time.Millisecond
		}
		if err := a.Lock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}
		// b waits while a holds the lock: its wait ends with its context.
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err := b.Lock(short, "issue_cert_example.com")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b took a held lock: %v", err)
		}
		// Another name is free.
		if err := b.Lock(ctx, "issue_cert_other.test"); err != nil {
			t.Fatal(err)
		}
		if err := b.Unlock(ctx, "issue_cert_other.test"); err != nil {
			t.Fatal(err)
		}
		// Released, the lock goes to the waiter.
		got := make(chan error, 1)
		go func() { got <- b.Lock(ctx, "issue_cert_example.com") }()
		if err := a.Unlock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if err := a.Unlock(ctx, "issue_cert_example.com"); err == nil {
			t.Fatal("a released a lock it does not hold")
		}
		if err := b.Unlock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}

		// A holder that dies (its renewals stop) loses the lock when it expires.
		dead := NewStorage(db)
		dead.LockTTL = 300 * time.Millisecond
		if err := dead.Lock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}
		dead.mu.Lock()
		h := dead.held["issue_cert_example.com"]
		dead.mu.Unlock()
		close(h.stop)
		<-h.done
		if err := a.Lock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}
		if err := a.Unlock(ctx, "issue_cert_example.com"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStorageLockKeptAlive checks that a held lock outlives its TTL while its holder lives.
func TestStorageLockKeptAlive(t *testing.T) {
	onEachStore(t, func(t *testing.T, db *sqlstore.Store) {
		ctx := t.Context()
		a, b := NewStorage(db), NewStorage(db)
		a.LockTTL, b.LockPoll = time.Second, 10*time.Millisecond
		if err := a.Lock(ctx, "l"); err != nil {
			t.Fatal(err)
		}
		// b tries for several of a's TTLs and never gets it: a renews it.
		short, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
		defer cancel()
		if err := b.Lock(short, "l"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("b took a lock whose holder lives: %v", err)
		}
		if err := a.Unlock(ctx, "l"); err != nil {
			t.Fatal(err)
		}
	})
}
