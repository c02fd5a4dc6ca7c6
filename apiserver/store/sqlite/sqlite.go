// Package sqlite implements store.Store on SQLite through modernc.org/sqlite (pure Go).
//
// Writes go through a single connection whose transactions begin with BEGIN IMMEDIATE, so
// writers queue in database/sql rather than racing for SQLite's write lock, and every commit
// is fsynced before Write returns (WAL with synchronous=FULL). Reads use a pool of query-only
// connections that WAL runs beside the writer, each transaction on one snapshot.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// readConns bounds the read pool; every SQLite connection holds its own page cache.
const readConns = 8

// Store is a store.Store on one SQLite database file.
type Store struct {
	write, read *sql.DB
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path and migrates it to the current schema.
// path is a file name; it must not contain '?'.
func Open(ctx context.Context, path string) (*Store, error) {
	// synchronous is per connection, and only the writer commits.
	write, err := openDB(path, "_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, err
	}
	read, err := openDB(path, "_pragma=query_only(1)")
	if err == nil {
		err = read.PingContext(ctx)
	}
	if err != nil {
		write.Close()
		return nil, err
	}
	read.SetMaxOpenConns(readConns)
	return &Store{write: write, read: read}, nil
}

func openDB(path, params string) (*sql.DB, error) {
	// busy_timeout covers the short locks readers can still meet (checkpoints, WAL recovery)
	// and writers in other processes.
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&"+params)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return db, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	return nil
}

// Read implements store.Store.
func (s *Store) Read(ctx context.Context, fn func(store.Tx) error) error {
	return run(ctx, s.read, &sql.TxOptions{ReadOnly: true}, fn)
}

// Write implements store.Store.
func (s *Store) Write(ctx context.Context, fn func(store.Tx) error) error {
	return run(ctx, s.write, nil, fn)
}

// Close implements store.Store.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

func run(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(store.Tx) error) error {
	t, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer t.Rollback() // undoes everything when fn fails or panics; a no-op after Commit
	if err := fn(&tx{t}); err != nil {
		return err
	}
	return t.Commit()
}

type tx struct{ tx *sql.Tx }

// columns reads an object with its unique keys and refs as JSON arrays, in one query.
const columns = `SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret,
	(SELECT json_group_array(key) FROM unique_keys WHERE object_id = o.id),
	(SELECT json_group_array(to_id) FROM refs WHERE from_id = o.id)
FROM objects o `

func (t *tx) query(ctx context.Context, tail string, args ...any) ([]*store.Object, error) {
	rows, err := t.tx.QueryContext(ctx, columns+tail, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var objs []*store.Object
	for rows.Next() {
		o := new(store.Object)
		var keys, refs string
		if err := rows.Scan(&o.ID, &o.Kind, &o.AccountID, &o.ParentID, &o.Doc, &o.Secret, &keys, &refs); err != nil {
			return nil, err
		}
		if o.UniqueKeys, err = decodeSet(keys); err != nil {
			return nil, err
		}
		if o.Refs, err = decodeSet(refs); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

func (t *tx) queryOne(ctx context.Context, tail string, args ...any) (*store.Object, error) {
	objs, err := t.query(ctx, tail, args...)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, store.ErrNotFound
	}
	return objs[0], nil
}

// decodeSet decodes a JSON array of strings into a sorted slice, nil when empty.
func decodeSet(js string) ([]string, error) {
	var s []string
	if err := json.Unmarshal([]byte(js), &s); err != nil || len(s) == 0 {
		return nil, err
	}
	slices.Sort(s)
	return s, nil
}

func (t *tx) Get(ctx context.Context, kind, id string) (*store.Object, error) {
	return t.queryOne(ctx, "WHERE o.id = ? AND o.kind = ?", id, kind)
}

func (t *tx) List(ctx context.Context, q store.ListQuery) ([]*store.Object, error) {
	tail := "WHERE o.account_id = ? AND o.kind = ? AND o.parent_id = ?"
	args := []any{q.AccountID, q.Kind, q.ParentID}
	if q.BeforeID != "" {
		tail += " AND o.id < ?"
		args = append(args, q.BeforeID)
	}
	tail += " ORDER BY o.id DESC"
	if q.Limit > 0 {
		tail += " LIMIT ?"
		args = append(args, q.Limit)
	}
	return t.query(ctx, tail, args...)
}

func (t *tx) Referrers(ctx context.Context, id string) ([]*store.Object, error) {
	return t.query(ctx, "JOIN refs r ON r.from_id = o.id WHERE r.to_id = ? ORDER BY r.from_id DESC", id)
}

func (t *tx) Lookup(ctx context.Context, uniqueKey string) (*store.Object, error) {
	return t.queryOne(ctx, "JOIN unique_keys u ON u.object_id = o.id WHERE u.key = ?", uniqueKey)
}

func (t *tx) Count(ctx context.Context, kind, accountID string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx,
		"SELECT count(*) FROM objects WHERE account_id = ? AND kind = ?", accountID, kind).Scan(&n)
	return n, err
}

func (t *tx) Insert(ctx context.Context, o *store.Object) error {
	return t.atomic(ctx, func() error {
		n, err := t.exec(ctx, `INSERT INTO objects (id, kind, account_id, parent_id, doc, secret)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			o.ID, o.Kind, o.AccountID, o.ParentID, o.Doc, o.Secret)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s", store.ErrExists, o.ID)
		}
		return t.claim(ctx, o)
	})
}

func (t *tx) Update(ctx context.Context, o *store.Object) error {
	return t.atomic(ctx, func() error {
		n, err := t.exec(ctx, "UPDATE objects SET doc = ?, secret = ? WHERE id = ? AND kind = ?",
			o.Doc, o.Secret, o.ID, o.Kind)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s %s", store.ErrNotFound, o.Kind, o.ID)
		}
		if _, err := t.exec(ctx, "DELETE FROM unique_keys WHERE object_id = ?", o.ID); err != nil {
			return err
		}
		if _, err := t.exec(ctx, "DELETE FROM refs WHERE from_id = ?", o.ID); err != nil {
			return err
		}
		return t.claim(ctx, o)
	})
}

// claim records the unique keys and refs of o, which holds none yet.
func (t *tx) claim(ctx context.Context, o *store.Object) error {
	for _, key := range set(o.UniqueKeys) {
		n, err := t.exec(ctx, "INSERT INTO unique_keys (key, object_id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, o.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			var holder string
			if err := t.tx.QueryRowContext(ctx, "SELECT object_id FROM unique_keys WHERE key = ?", key).Scan(&holder); err != nil {
				return err
			}
			return &store.DuplicateError{Key: key, HolderID: holder}
		}
	}
	for _, ref := range set(o.Refs) {
		// Inserts nothing when ref names no object, which tells the missing ref apart from
		// the foreign-key error that would otherwise name none.
		n, err := t.exec(ctx, "INSERT INTO refs (from_id, to_id) SELECT ?, id FROM objects WHERE id = ?", o.ID, ref)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: ref %s", store.ErrNotFound, ref)
		}
	}
	return nil
}

// set returns s sorted without duplicates, leaving the caller's slice alone.
func set(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}

func (t *tx) Delete(ctx context.Context, kind, id string) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT r.from_id FROM refs r JOIN objects o ON o.id = r.to_id
		WHERE r.to_id = ? AND o.kind = ? ORDER BY r.from_id DESC`, id, kind)
	if err != nil {
		return err
	}
	defer rows.Close()
	var referrers []string
	for rows.Next() {
		var from string
		if err := rows.Scan(&from); err != nil {
			return err
		}
		referrers = append(referrers, from)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(referrers) > 0 {
		return &store.ReferencedError{ID: id, ReferrerIDs: referrers}
	}
	// One statement, so no savepoint: its cascades to keys and refs are atomic with it.
	n, err := t.exec(ctx, "DELETE FROM objects WHERE id = ? AND kind = ?", id, kind)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %s", store.ErrNotFound, kind, id)
	}
	return nil
}

func (t *tx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// atomic runs fn under a savepoint so that a failed Insert or Update leaves no partial change
// behind, even when the caller handles the error and commits the transaction.
func (t *tx) atomic(ctx context.Context, fn func() error) error {
	if _, err := t.tx.ExecContext(ctx, "SAVEPOINT op"); err != nil {
		return err
	}
	if err := fn(); err != nil {
		_, rerr := t.tx.ExecContext(ctx, "ROLLBACK TO op")
		if rerr == nil {
			_, rerr = t.tx.ExecContext(ctx, "RELEASE op")
		}
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	_, err := t.tx.ExecContext(ctx, "RELEASE op")
	return err
}
