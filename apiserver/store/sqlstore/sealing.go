package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// checkValue is what the secret_check row seals; its row is (checkKind, checkID).
var checkValue = []byte("warren secret check")

const checkKind, checkID = "secret_check", "1"

// CheckKeys opens the database's check value with the store's keys, sealing one first when
// the database has none: a wrong key fails here, at start-up, rather than at the first
// request that needs a secret. A database with a check value and a store without keys fail
// too (sealing.ErrNoKeyring).
func (s *Store) CheckKeys(ctx context.Context) error {
	return s.Write(ctx, func(stx store.Tx) error {
		t := stx.(*tx)
		var v []byte
		err := t.tx.QueryRowContext(ctx, "SELECT value FROM secret_check WHERE id = 1").Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if s.keys == nil {
				return nil
			}
			_, err := t.exec(ctx, "INSERT INTO secret_check (id, value) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
				s.keys.Seal(checkKind, checkID, checkValue))
			return err
		case err != nil:
			return err
		case s.keys == nil:
			return sealing.ErrNoKeyring
		}
		plain, err := s.keys.Open(checkKind, checkID, v)
		if err == nil && !bytes.Equal(plain, checkValue) {
			err = errors.New("the check value is not the expected one")
		}
		if err != nil {
			return fmt.Errorf("the secret key (key id %s) does not open this database's secrets: configure the key they were sealed with, or add it to the previous secret keys while rotating: %w", s.keys.KeyID(), err)
		}
		return nil
	})
}

// resealBatch is how many rows one transaction of Reseal looks at.
const resealBatch = 100

// Reseal seals every stored secret that is not sealed with the current key (sealed with a
// previous key, or plaintext from before sealing) with the current key, a batch of rows per
// transaction, then the check value, and returns how many secrets it sealed again. Run it
// once every server has the new key as current: a server still sealing with the old key
// would write values the rotation has passed.
func (s *Store) Reseal(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, sealing.ErrNoKeyring
	}
	resealed, err := s.inBatches(ctx, func(t *tx, after string) (seen, n int, last string, err error) {
		rows, err := t.tx.QueryContext(ctx, t.d.rebind(
			"SELECT id, kind, secret FROM objects WHERE id > ? AND secret IS NOT NULL ORDER BY id LIMIT ?"), after, resealBatch)
		if err != nil {
			return 0, 0, "", err
		}
		type row struct {
			id, kind string
			secret   []byte
		}
		var stale []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.kind, &r.secret); err != nil {
				rows.Close()
				return 0, 0, "", err
			}
			seen, last = seen+1, r.id
			if len(r.secret) > 0 && !s.keys.Current(r.secret) {
				stale = append(stale, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, 0, "", err
		}
		for _, r := range stale {
			plain, err := s.keys.Open(r.kind, r.id, r.secret)
			if err != nil {
				return 0, 0, "", err
			}
			if _, err := t.exec(ctx, "UPDATE objects SET secret = ? WHERE id = ?", s.keys.Seal(r.kind, r.id, plain), r.id); err != nil {
				return 0, 0, "", err
			}
			n++
		}
		return seen, n, last, nil
	})
	if err != nil {
		return resealed, err
	}
	// Last: while rows sealed with an old key remain, a start without that key must fail.
	err = s.Write(ctx, func(stx store.Tx) error {
		t := stx.(*tx)
		var v []byte
		err := t.tx.QueryRowContext(ctx, "SELECT value FROM secret_check WHERE id = 1").Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err == nil && s.keys.Current(v) {
			return nil
		}
		if err == nil {
			if _, err := s.keys.Open(checkKind, checkID, v); err != nil {
				return err
			}
		}
		_, err = t.exec(ctx, "INSERT INTO secret_check (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value",
			s.keys.Seal(checkKind, checkID, checkValue))
		return err
	})
	return resealed, err
}

// Upgrade implements store.Upgrader: the objects of kind in ID order, resealBatch per write
// transaction, each read and updated through the transaction's Get and Update (so the secret
// is opened and sealed, doc_jsonb follows the document). It returns how many changed.
func (s *Store) Upgrade(ctx context.Context, kind string, change func(o *store.Object) (bool, error)) (int, error) {
	return s.inBatches(ctx, func(t *tx, after string) (seen, n int, last string, err error) {
		rows, err := t.tx.QueryContext(ctx, t.d.rebind("SELECT id FROM objects WHERE kind = ? AND id > ? ORDER BY id LIMIT ?"), kind, after, resealBatch)
		if err != nil {
			return 0, 0, "", err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return 0, 0, "", err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, 0, "", err
		}
		for _, id := range ids {
			seen, last = seen+1, id
			o, err := t.Get(ctx, kind, id)
			if err != nil {
				return 0, 0, "", err
			}
			changed, err := change(o)
			if err != nil {
				return 0, 0, "", fmt.Errorf("upgrade %s %s: %w", kind, id, err)
			}
			if !changed {
				continue
			}
			if err := t.Update(ctx, o); err != nil {
				return 0, 0, "", err
			}
			n++
		}
		return seen, n, last, nil
	})
}

// inBatches runs batch in one write transaction after another, each on the rows after the
// last ID the previous one saw, until a batch sees fewer than resealBatch rows; it returns
// how many rows the batches changed. A batch's transaction may run again (a retry), so it
// returns its counts rather than adding to them.
func (s *Store) inBatches(ctx context.Context, batch func(t *tx, after string) (seen, changed int, last string, err error)) (int, error) {
	total, after := 0, ""
	for {
		var seen, changed int
		var last string
		err := s.Write(ctx, func(stx store.Tx) (err error) {
			seen, changed, last, err = batch(stx.(*tx), after)
			return err
		})
		if err != nil {
			return total, err
		}
		total += changed
		if seen < resealBatch {
			return total, nil
		}
		after = last
	}
}
