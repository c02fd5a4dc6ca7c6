package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// Opener opens (creating and migrating when needed) the database at where.
type Opener func(ctx context.Context, where string, opts ...sqlstore.Option) (*sqlstore.Store, error)

// Sealing runs the tests of secrets at rest: newDB returns where a new empty database is,
// open opens it (again) with or without keys.
func Sealing(t *testing.T, newDB func(t *testing.T) string, open Opener) {
	k1, k2 := sealing.GenerateKey(), sealing.GenerateKey()
	ring := func(t *testing.T, cur []byte, prev ...[]byte) sqlstore.Option {
		k, err := sealing.NewKeyring(cur, prev...)
		if err != nil {
			t.Fatal(err)
		}
		return sqlstore.WithKeys(k)
	}
	reopen := func(t *testing.T, where string, opts ...sqlstore.Option) *sqlstore.Store {
		t.Helper()
		s, err := open(t.Context(), where, opts...)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	t.Run("NoPlaintextAtRest", func(t *testing.T) {
		s := reopen(t, newDB(t), ring(t, k1))
		insert(t, s, secretObj("t_0001", "one"))
		raw := rawSecret(t, s, "t_0001")
		if !sealing.Sealed(raw) || bytes.Contains(raw, []byte("PRIVATE KEY")) || bytes.Contains(raw, []byte("one")) {
			t.Fatalf("the secret column holds %q", raw)
		}
		wantSecret(t, s, "t_0001", "one")
		upd := secretObj("t_0001", "two")
		if err := updateErr(t, s, upd); err != nil {
			t.Fatal(err)
		}
		if raw := rawSecret(t, s, "t_0001"); !sealing.Sealed(raw) || bytes.Contains(raw, []byte("PRIVATE KEY")) {
			t.Fatalf("after an update the secret column holds %q", raw)
		}
		wantSecret(t, s, "t_0001", "two")
		if got := list(t, s, store.ListQuery{Kind: kind, AccountID: acct}); len(got) != 1 || !bytes.Equal(got[0].Secret, secretOf("two")) {
			t.Fatalf("List: %+v", got)
		}
		// No secret, nothing sealed.
		insert(t, s, obj("t_0002"))
		if raw := rawSecret(t, s, "t_0002"); len(raw) != 0 {
			t.Fatalf("an object without a secret stores %q", raw)
		}
	})

	t.Run("MovedValueDoesNotOpen", func(t *testing.T) {
		s := reopen(t, newDB(t), ring(t, k1))
		insert(t, s, secretObj("t_0001", "one"))
		insert(t, s, secretObj("t_0002", "two"))
		setRawSecret(t, s, "t_0002", rawSecret(t, s, "t_0001"))
		_, err := get(t, s, kind, "t_0002")
		var ke *sealing.KeyError
		if !errors.As(err, &ke) || ke.Unknown {
			t.Fatalf("Get of a row holding another row's value: %v, want a KeyError", err)
		}
	})

	t.Run("WrongKeyRefused", func(t *testing.T) {
		where := newDB(t)
		s := reopen(t, where, ring(t, k1))
		insert(t, s, secretObj("t_0001", "one"))
		s.Close()
		if _, err := open(t.Context(), where, ring(t, k2)); err == nil || !strings.Contains(err.Error(), "does not open this database's secrets") {
			t.Fatalf("open with another key: %v", err)
		}
		if _, err := open(t.Context(), where); !errors.Is(err, sealing.ErrNoKeyring) {
			t.Fatalf("open without a key: %v, want ErrNoKeyring", err)
		}
	})

	t.Run("Rotation", func(t *testing.T) {
		where := newDB(t)
		s := reopen(t, where, ring(t, k1))
		for i := range 150 { // more than one batch of Reseal
			insert(t, s, secretObj(fmt.Sprintf("t_%04d", i), "old"))
		}
		insert(t, s, obj("t_9999"))
		s.Close()

		s = reopen(t, where, ring(t, k2, k1))
		wantSecret(t, s, "t_0007", "old") // opened with the previous key
		insert(t, s, secretObj("t_1000", "new"))
		k2only, _ := sealing.NewKeyring(k2)
		if !k2only.Current(rawSecret(t, s, "t_1000")) {
			t.Fatal("a new write is not sealed with the current key")
		}
		n, err := s.Reseal(t.Context())
		if err != nil || n != 150 {
			t.Fatalf("Reseal = %d, %v; want 150", n, err)
		}
		if n, err := s.Reseal(t.Context()); err != nil || n != 0 {
			t.Fatalf("a second Reseal = %d, %v; want 0", n, err)
		}
		s.Close()

		s = reopen(t, where, ring(t, k2)) // the old key is gone
		wantSecret(t, s, "t_0149", "old")
		wantSecret(t, s, "t_1000", "new")
		if raw := rawSecret(t, s, "t_0042"); !k2only.Current(raw) {
			t.Fatal("Reseal left a row sealed with the old key")
		}
	})

	t.Run("PlaintextRowsFromBefore", func(t *testing.T) {
		where := newDB(t)
		s := reopen(t, where) // a database from before sealing
		insert(t, s, secretObj("t_0001", "legacy"))
		if raw := rawSecret(t, s, "t_0001"); !bytes.Equal(raw, secretOf("legacy")) {
			t.Fatalf("without keys the column holds %q", raw)
		}
		s.Close()

		s = reopen(t, where, ring(t, k1))
		wantSecret(t, s, "t_0001", "legacy")
		if n, err := s.Reseal(t.Context()); err != nil || n != 1 {
			t.Fatalf("Reseal = %d, %v; want 1", n, err)
		}
		if raw := rawSecret(t, s, "t_0001"); !sealing.Sealed(raw) {
			t.Fatalf("Reseal left %q", raw)
		}
		wantSecret(t, s, "t_0001", "legacy")
	})
}

// secretOf is a secret as the server keeps one: JSON holding a PEM private key.
func secretOf(v string) []byte {
	return []byte(`{"private_key_pem":"-----BEGIN PRIVATE KEY-----\n` + v + `\n-----END PRIVATE KEY-----\n"}`)
}

func secretObj(id, v string) *store.Object {
	o := obj(id)
	o.Secret = secretOf(v)
	return o
}

func wantSecret(t *testing.T, s store.Store, id, v string) {
	t.Helper()
	o, err := get(t, s, kind, id)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	if !bytes.Equal(o.Secret, secretOf(v)) {
		t.Fatalf("Get %s: secret %q, want %q", id, o.Secret, secretOf(v))
	}
}

// rawSecret reads the secret column as the database holds it. The IDs of these tests are
// plain literals, which keeps the query free of dialect placeholders.
func rawSecret(t *testing.T, s *sqlstore.Store, id string) []byte {
	t.Helper()
	db, _ := s.DB()
	var v []byte
	if err := db.QueryRowContext(t.Context(), "SELECT secret FROM objects WHERE id = '"+id+"'").Scan(&v); err != nil {
		t.Fatalf("raw secret of %s: %v", id, err)
	}
	return v
}

func setRawSecret(t *testing.T, s *sqlstore.Store, id string, v []byte) {
	t.Helper()
	db, _ := s.DB()
	if _, err := db.ExecContext(t.Context(), "UPDATE objects SET secret = decode('"+fmt.Sprintf("%x", v)+"', 'hex') WHERE id = '"+id+"'"); err != nil {
		// SQLite has no decode(); it takes a blob literal.
		if _, err2 := db.ExecContext(t.Context(), "UPDATE objects SET secret = X'"+fmt.Sprintf("%x", v)+"' WHERE id = '"+id+"'"); err2 != nil {
			t.Fatalf("set raw secret of %s: %v; %v", id, err, err2)
		}
	}
}
