// Package sqlstore implements store.Store on database/sql, for every SQL database the
// server supports: the schema and the queries are the same, and a Dialect holds what differs
// (placeholders, JSON aggregation, transaction options, which errors mean "run it again").
//
// Every object is a row of objects; its unique keys and refs are rows of unique_keys and refs,
// and a copy of them on the object's row (key_set, ref_set) is what reading an object reads.
// "Does the ref exist" and "is this still referenced" are checked explicitly inside the
// transaction, so the errors are precise; the foreign key on refs.to_id is a backstop.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// Dialect is what one database does its own way.
type Dialect struct {
	// Numbered turns the ? placeholders into $1, $2 … (PostgreSQL).
	Numbered bool
	// WritableCTE: the database runs INSERTs inside WITH (PostgreSQL), so that Insert writes
	// an object, its unique keys and its refs in one statement, one round trip.
	WritableCTE bool
	// ReadOptions and WriteOptions begin read-only and read-write transactions.
	ReadOptions, WriteOptions sql.TxOptions
	// SkipLocked ends a SELECT whose rows a transaction locks and other transactions skip
	// (" FOR UPDATE SKIP LOCKED"); ForUpdate one whose rows it locks (" FOR UPDATE"). Both
	// are "" where write transactions never run side by side (SQLite).
	SkipLocked, ForUpdate string
	// Retryable reports whether a failed write transaction may succeed when run again
	// (a serialization failure or a deadlock); nil when the database never asks for that.
	Retryable func(error) bool
	// Unavailable reports whether an error means the database cannot be reached or is not
	// taking work now, rather than a failure of the statement: the store then wraps it in
	// store.ErrUnavailable. Each database knows its own errors.
	Unavailable func(error) bool
	// JSON reads the stored documents for the conditions of List.
	JSON JSON
	// DocJSONB makes the column doc_jsonb, the document in the database's binary JSON that
	// JSON reads, from the document as a parameter (SQLite: "jsonb(CAST(? AS TEXT))"); ""
	// where the database generates the column itself (PostgreSQL).
	DocJSONB string
	// TakeTokens is the statement of store.RateBuckets' Take, with the arguments key, want,
	// the bucket's size, its period in microseconds and now in Unix microseconds; it returns
	// the tokens taken and left. "" where one process has the database to itself.
	TakeTokens string
	// Schema is the version of the newest migration the binary applies (goose's numbering);
	// Ready checks that the database has it.
	Schema int64
	// columns is the select list of tx.query, built once by New; docColumns the same
	// without keys and refs (ListQuery.DocsOnly).
	columns, docColumns string
	// Prepare keeps the hot queries (an object by ID, by unique key, its referrers) prepared
	// on every connection, for a driver that would otherwise parse each one on every call
	// (SQLite: parsing was a third of a GET's CPU). pgx caches its statements itself.
	Prepare bool
}

// rebind adapts a query written with ? placeholders.
func (d *Dialect) rebind(query string) string {
	if !d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// unavailable wraps err in store.ErrUnavailable when Unavailable says so.
func (d *Dialect) unavailable(err error) error {
	if err == nil || d.Unavailable == nil || errors.Is(err, store.ErrUnavailable) || !d.Unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// Store is a store.Store on a SQL database. Writes go through write and reads through read,
// which may be the same pool.
type Store struct {
	write, read *sql.DB
	dialect     Dialect

	// The hot queries prepared on each pool (Dialect.Prepare), by query text; prepared once,
	// before the first transaction of a pool takes a connection, so preparing never waits
	// for a connection while holding one.
	stmtMu sync.Mutex
	stmts  map[*sql.DB]map[string]*sql.Stmt
	keys   *sealing.Keyring // seals the secret column; nil keeps it in plaintext

	commitMu    sync.Mutex
	commitHooks []func(kinds []string) // store.Routing's OnCommit
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Routing = (*Store)(nil)
)

// DB returns the pools, for checks particular to one database (its settings, its integrity).
func (s *Store) DB() (write, read *sql.DB) { return s.write, s.read }

// Keys are the keys the store seals with; nil when it has none.
func (s *Store) Keys() *sealing.Keyring { return s.keys }

// Option configures a Store.
type Option func(*Store)

// WithKeys seals every object's secret with keys (see package sealing): the one place where
// server-only data is encrypted on its way to the database and decrypted on its way back.
func WithKeys(keys *sealing.Keyring) Option { return func(s *Store) { s.keys = keys } }

// New returns a Store on already migrated databases.
func New(write, read *sql.DB, d Dialect, opts ...Option) *Store {
	d.columns = d.selectColumns()
	d.docColumns = "SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret, '[]', '[]' FROM objects o "
	s := &Store{write: write, read: read, dialect: d}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Read implements store.Store.
func (s *Store) Read(ctx context.Context, fn func(store.Tx) error) error {
	return s.run(ctx, s.read, &s.dialect.ReadOptions, fn)
}

// Write implements store.Store. A transaction the database aborted for a serialization
// conflict (Dialect.Retryable) runs again, a bounded number of times.
func (s *Store) Write(ctx context.Context, fn func(store.Tx) error) error {
	for attempt := 1; ; attempt++ {
		var t *tx
		err := s.dialect.unavailable(s.runTx(ctx, s.write, &s.dialect.WriteOptions, func(st store.Tx) error {
			t = st.(*tx)
			return fn(st)
		}))
		if err == nil {
			s.committed(t.written)
		}
		if err == nil || s.dialect.Retryable == nil || !s.dialect.Retryable(err) || attempt == maxAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rand.IntN(attempt*5)+1) * time.Millisecond):
		}
	}
}

// Revision implements store.Routing. It is one statement, not a transaction: every replica
// polls it twice a second, and a transaction's BEGIN and COMMIT would triple the round trips
// (and the delay) before a change made elsewhere is seen.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	var rev int64
	err := s.read.QueryRowContext(ctx, "SELECT CAST(coalesce(sum(revision), 0) AS bigint) FROM routing_revision").Scan(&rev)
	return rev, s.dialect.unavailable(err)
}

// OnCommit implements store.Routing.
func (s *Store) OnCommit(fn func(kinds []string)) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.commitHooks = append(s.commitHooks, fn)
}

// committed calls the OnCommit hooks after a write transaction that wrote the kinds written.
func (s *Store) committed(written map[string]bool) {
	if len(written) == 0 {
		return
	}
	s.commitMu.Lock()
	hooks := s.commitHooks
	s.commitMu.Unlock()
	if len(hooks) == 0 {
		return
	}
	kinds := slices.Sorted(maps.Keys(written))
	for _, fn := range hooks {
		fn(kinds)
	}
}

// Ready implements store.Store: a read answers, and goose's version table records the
// newest migration this binary knows.
func (s *Store) Ready(ctx context.Context) error {
	var have int64
	err := s.run(ctx, s.read, &s.dialect.ReadOptions, func(st store.Tx) error {
		return st.(*tx).tx.QueryRowContext(ctx,
			"SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&have)
	})
	if err != nil {
		return err
	}
	if have < s.dialect.Schema {
		return &store.SchemaError{Have: have, Want: s.dialect.Schema}
	}
	return nil
}

// maxAttempts bounds the retries of a write transaction.
const maxAttempts = 50

// Close implements store.Store.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, stmts := range s.stmts {
		for _, st := range stmts {
			st.Close()
		}
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if s.read == s.write {
		return s.write.Close()
	}
	return errors.Join(s.read.Close(), s.write.Close())
}

// run runs fn in one transaction of db. Every transaction of the store goes through it, so
// its errors are where the dialect tells an unreachable database (store.ErrUnavailable).
func (s *Store) run(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(store.Tx) error) error {
	return s.dialect.unavailable(s.runTx(ctx, db, opts, fn))
}

func (s *Store) runTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(store.Tx) error) error {
	stmts, err := s.prepared(ctx, db)
	if err != nil {
		return err
	}
	t, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer t.Rollback() // undoes everything when fn fails or panics; a no-op after Commit
	if err := fn(&tx{tx: t, d: &s.dialect, stmts: stmts, keys: s.keys}); err != nil {
		return err
	}
	return t.Commit()
}

// hotQueries are the queries Dialect.Prepare keeps prepared: the tails of tx.query that
// every request runs (authentication and GET by ID).
var hotQueries = []string{getTail, lookupTail, referrersTail}

// pageTails are the tails of List for a page to render without a filter (ListQuery.DocsOnly,
// after docColumns): the first page and the next ones.
var pageTails = []string{
	"WHERE o.account_id = ? AND o.kind = ? AND o.parent_id = ? ORDER BY o.id DESC LIMIT ?",
	"WHERE o.account_id = ? AND o.kind = ? AND o.parent_id = ? AND o.id < ? ORDER BY o.id DESC LIMIT ?",
}

const (
	getTail = "WHERE o.id = ? AND o.kind = ?"
	// getWithQuery is a whole query, not a tail: three indexed lookups whose objects come
	// without their keys and refs (GetWith's callers need neither).
	getWithQuery = `SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret FROM objects o WHERE o.id = ?
UNION ALL SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret FROM refs r JOIN objects o ON o.id = r.to_id WHERE r.from_id = ?
UNION ALL SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret FROM objects k
	JOIN unique_keys u ON u.key = CAST(? AS TEXT) || k.account_id || CAST(? AS TEXT)
	JOIN objects o ON o.id = u.object_id WHERE k.id = ?
UNION ALL SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret FROM objects k
	JOIN objects o ON o.id = k.account_id WHERE k.id = ? AND o.id <> k.id`
	lookupTail    = "JOIN unique_keys u ON u.object_id = o.id WHERE u.key = ?"
	referrersTail = "JOIN refs r ON r.from_id = o.id WHERE r.to_id = ? ORDER BY r.from_id DESC"
)

// hotQueryTexts are the texts of the queries Dialect.Prepare keeps prepared.
func (s *Store) hotQueryTexts() []string {
	d := &s.dialect
	queries := []string{d.rebind(getWithQuery)}
	for _, tail := range hotQueries {
		queries = append(queries, d.rebind(d.columns+tail))
	}
	for _, tail := range pageTails {
		queries = append(queries, d.rebind(d.docColumns+tail))
	}
	return queries
}

// prepared returns the hot queries prepared on db, preparing them on first use; nil
// without Dialect.Prepare. database/sql prepares each again on every connection that runs it
// (once per connection) and Tx.StmtContext reuses that.
func (s *Store) prepared(ctx context.Context, db *sql.DB) (map[string]*sql.Stmt, error) {
	if !s.dialect.Prepare {
		return nil, nil
	}
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if stmts, ok := s.stmts[db]; ok {
		return stmts, nil
	}
	stmts := map[string]*sql.Stmt{}
	for _, q := range s.hotQueryTexts() {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, st := range stmts {
				st.Close()
			}
			return nil, err
		}
		stmts[q] = st
	}
	if s.stmts == nil {
		s.stmts = map[*sql.DB]map[string]*sql.Stmt{}
	}
	s.stmts[db] = stmts
	return stmts, nil
}

type tx struct {
	tx    *sql.Tx
	d     *Dialect
	stmts map[string]*sql.Stmt // prepared hot queries by text; nil when none
	keys  *sealing.Keyring
	// written holds the kinds this transaction wrote (store.Routing's OnCommit), and
	// bumped the accounts whose routing revision it moved (once per transaction is enough).
	written map[string]bool
	bumped  map[string]bool
}

// wrote records a write of kind in account that succeeded and, when kind is one of
// kinds.Routing, moves the account's routing revision, once per transaction.
func (t *tx) wrote(ctx context.Context, kind, account string) error {
	if t.written == nil {
		t.written = map[string]bool{}
	}
	t.written[kind] = true
	if t.bumped[account] || !kinds.Routing[kind] {
		return nil
	}
	if _, err := t.exec(ctx, `INSERT INTO routing_revision (account_id, revision) VALUES (?, 1)
		ON CONFLICT (account_id) DO UPDATE SET revision = routing_revision.revision + 1`, account); err != nil {
		return err
	}
	if t.bumped == nil {
		t.bumped = map[string]bool{}
	}
	t.bumped[account] = true
	return nil
}

// queryContext runs a query, through its prepared statement when it is a hot one.
func (t *tx) queryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st, ok := t.stmts[query]; ok {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// seal is what the secret column stores for o.
func (t *tx) seal(o *store.Object) []byte {
	if t.keys == nil {
		return o.Secret
	}
	return t.keys.Seal(o.Kind, o.ID, o.Secret)
}

// columns reads an object with its unique keys and refs, all from its row.
func (t *tx) columns() string { return t.d.columns }

// selectColumns reads the keys and refs from the object's own row (key_set, ref_set), not
// from unique_keys and refs: under SERIALIZABLE, reading those tables in a write transaction
// took page locks on their indexes that every other write of an object with keys or refs
// conflicted with.
func (d *Dialect) selectColumns() string {
	return `SELECT o.id, o.kind, o.account_id, o.parent_id, o.doc, o.secret, o.key_set, o.ref_set FROM objects o `
}

func (t *tx) query(ctx context.Context, tail string, args ...any) ([]*store.Object, error) {
	return t.queryColumns(ctx, t.columns(), tail, args...)
}

// queryColumns runs tail after the select list columns (t.d.columns or t.d.docColumns).
func (t *tx) queryColumns(ctx context.Context, columns, tail string, args ...any) ([]*store.Object, error) {
	rows, err := t.queryContext(ctx, t.d.rebind(columns+tail), args...)
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
		if o.Secret, err = t.keys.Open(o.Kind, o.ID, o.Secret); err != nil {
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

// encodeSet is what key_set and ref_set hold for s: its set (sorted, no duplicates) as a JSON
// array, "[]" when empty. Update compares the stored text with it, so that one form must be
// kept: an equal set written another way only costs Update its slower path.
func encodeSet(s []string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(append([]string{}, set(s)...)); err != nil {
		panic(err) // strings always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// decodeSet decodes a JSON array of strings into a sorted slice, nil when empty.
func decodeSet(js string) ([]string, error) {
	if js == "[]" { // most objects have no keys or no refs
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal([]byte(js), &s); err != nil || len(s) == 0 {
		return nil, err
	}
	slices.Sort(s)
	return s, nil
}

func (t *tx) Get(ctx context.Context, kind, id string) (*store.Object, error) {
	return t.queryOne(ctx, getTail, id, kind)
}

func (t *tx) GetWith(ctx context.Context, kind, id string, key store.AccountKey) (*store.Object, []*store.Object, error) {
	rows, err := t.queryContext(ctx, t.d.rebind(getWithQuery), id, id, key.Prefix, key.Suffix, id, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var obj *store.Object
	var with []*store.Object
	for rows.Next() {
		o := new(store.Object)
		if err := rows.Scan(&o.ID, &o.Kind, &o.AccountID, &o.ParentID, &o.Doc, &o.Secret); err != nil {
			return nil, nil, err
		}
		if o.Secret, err = t.keys.Open(o.Kind, o.ID, o.Secret); err != nil {
			return nil, nil, err
		}
		if obj == nil && o.ID == id {
			obj = o
		} else {
			with = append(with, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if obj == nil || obj.Kind != kind {
		return nil, nil, store.ErrNotFound
	}
	return obj, with, nil
}

func (t *tx) List(ctx context.Context, q store.ListQuery) ([]*store.Object, error) {
	if q.AllAccounts {
		tail, args := "WHERE o.kind = ?", []any{q.Kind}
		if q.BeforeID != "" {
			tail += " AND o.id < ?"
			args = append(args, q.BeforeID)
		}
		tail += " ORDER BY o.id DESC"
		if q.Limit > 0 {
			tail += " LIMIT ?"
			args = append(args, q.Limit)
		}
		return t.queryColumns(ctx, t.columns(), tail, args...)
	}
	query, args := t.listSQL(q)
	return t.queryColumns(ctx, "", query, args...)
}

// listSQL is the query of List and its arguments.
func (t *tx) listSQL(q store.ListQuery) (string, []any) {
	// The kind as a literal (kinds are code's identifiers), so that a plan may pick a
	// partial index of one kind, as a cached generic plan of "kind = $2" could not.
	// Where statements stay prepared (SQLite, which has no partial indexes), a page to
	// render is one of the prepared pageTails, with the kind a parameter.
	tail := "WHERE o.account_id = ? AND o.kind = " + kindLiteral(q.Kind) + " AND o.parent_id = ?"
	args := []any{q.AccountID, q.ParentID}
	if !isIdentifier(q.Kind) || (t.stmts != nil && q.DocsOnly && q.Where == nil) {
		tail = "WHERE o.account_id = ? AND o.kind = ? AND o.parent_id = ?"
		args = []any{q.AccountID, q.Kind, q.ParentID}
	}
	if q.BeforeID != "" {
		tail += " AND o.id < ?"
		args = append(args, q.BeforeID)
	}
	if q.Where != nil {
		tail += " AND " + t.where(q.Where, &args)
	}
	tail += " ORDER BY o.id DESC"
	if q.Limit > 0 {
		tail += " LIMIT ?"
		args = append(args, q.Limit)
	}
	if q.DocsOnly {
		return t.d.docColumns + tail, args
	}
	return t.columns() + tail, args
}

// kindLiteral quotes a kind that isIdentifier accepted.
func kindLiteral(kind string) string { return "'" + kind + "'" }

// isIdentifier: lower-case letters and underscores only, safe to quote as a literal.
func isIdentifier(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return s != ""
}

func (t *tx) Referrers(ctx context.Context, id string) ([]*store.Object, error) {
	return t.query(ctx, referrersTail, id)
}

func (t *tx) Lookup(ctx context.Context, uniqueKey string) (*store.Object, error) {
	return t.queryOne(ctx, lookupTail, uniqueKey)
}

func (t *tx) Count(ctx context.Context, kind, accountID string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx,
		t.d.rebind("SELECT count(*) FROM objects WHERE account_id = ? AND kind = ?"), accountID, kind).Scan(&n)
	return n, err
}

func (t *tx) CountReferrers(ctx context.Context, id, kind string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx,
		t.d.rebind("SELECT count(*) FROM refs r JOIN objects o ON o.id = r.from_id WHERE r.to_id = ? AND o.kind = ?"), id, kind).Scan(&n)
	return n, err
}

func (t *tx) Insert(ctx context.Context, o *store.Object) error {
	if err := t.insert(ctx, o); err != nil {
		return err
	}
	return t.wrote(ctx, o.Kind, o.AccountID)
}

func (t *tx) insert(ctx context.Context, o *store.Object) error {
	keys, refs := encodeSet(o.UniqueKeys), encodeSet(o.Refs)
	insert := func() error {
		docs, args := t.setDoc(o)
		n, err := t.exec(ctx, `INSERT INTO objects (id, kind, account_id, parent_id, key_set, ref_set, `+docs.columns+`)
			VALUES (?, ?, ?, ?, ?, ?, `+docs.values+`) ON CONFLICT (id) DO NOTHING`,
			append([]any{o.ID, o.Kind, o.AccountID, o.ParentID, keys, refs}, args...)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: %s", store.ErrExists, o.ID)
		}
		return nil
	}
	switch {
	case len(o.UniqueKeys) == 0 && len(o.Refs) == 0:
		// One statement: it stores all or nothing, so it needs no savepoint.
		return insert()
	case t.d.WritableCTE:
		return t.insertWith(ctx, o, keys, refs)
	}
	return t.atomic(ctx, func() error {
		if err := insert(); err != nil {
			return err
		}
		return t.claim(ctx, o)
	})
}

// insertCTE stores an object ($1…$6), its unique keys ($7) and its refs ($8) in one
// statement, unless a ref names no object or the ID is taken; it returns whether it stored
// the object and how many of the keys it claimed. A key another object holds is skipped
// (ON CONFLICT), not read first: under SERIALIZABLE such a read would lock the index page
// that every other insert of a key writes, and concurrent creates would abort each other.
// The refs are looked up as an array of IDs, which only an index scan of those IDs can
// answer: a join that the planner may run as a scan would lock all of objects. The refs'
// foreign keys are checked at the end of the statement, when the object's row exists.
const insertCTE = `WITH k AS (SELECT json_array_elements_text(CAST($7 AS json)) AS key),
r AS (SELECT json_array_elements_text(CAST($8 AS json)) AS to_id),
ins AS (INSERT INTO objects (id, kind, account_id, parent_id, doc, secret, key_set, ref_set)
	SELECT CAST($1 AS text), CAST($2 AS text), CAST($3 AS text), CAST($4 AS text), CAST($5 AS bytea), CAST($6 AS bytea), CAST($7 AS text), CAST($8 AS text)
	WHERE (SELECT count(*) FROM objects x WHERE x.id = ANY (ARRAY(SELECT to_id FROM r))) = json_array_length(CAST($8 AS json))
	ON CONFLICT (id) DO NOTHING RETURNING id),
ik AS (INSERT INTO unique_keys (key, object_id) SELECT k.key, ins.id FROM k, ins ON CONFLICT (key) DO NOTHING RETURNING key),
ir AS (INSERT INTO refs (from_id, to_id) SELECT ins.id, r.to_id FROM r, ins)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM ik)`

// insertWith is Insert through insertCTE. What went wrong is read only on the way to an
// error, with Insert's errors in Insert's order: the ID, the first key taken, the first
// missing ref.
func (t *tx) insertWith(ctx context.Context, o *store.Object, keys, refs string) error {
	var inserted, claimed int
	err := t.tx.QueryRowContext(ctx, insertCTE, o.ID, o.Kind, o.AccountID, o.ParentID, o.Doc, t.seal(o), keys, refs).
		Scan(&inserted, &claimed)
	wanted := set(o.UniqueKeys)
	if err != nil || inserted == 1 && claimed == len(wanted) {
		return err
	}
	if inserted == 0 {
		var exists bool
		if err := t.tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM objects WHERE id = $1)", o.ID).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("%w: %s", store.ErrExists, o.ID)
		}
	}
	var taken, missing string
	err = t.tx.QueryRowContext(ctx, `SELECT
		coalesce((SELECT json_agg(json_build_array(key, object_id)) FROM unique_keys WHERE key = ANY (SELECT json_array_elements_text(CAST($2 AS json))) AND object_id <> $1), '[]')::text,
		coalesce((SELECT json_agg(to_id) FROM json_array_elements_text(CAST($3 AS json)) AS r(to_id) WHERE NOT EXISTS (SELECT 1 FROM objects WHERE id = r.to_id)), '[]')::text`,
		o.ID, keys, refs).Scan(&taken, &missing)
	if err != nil {
		return err
	}
	if inserted == 1 {
		// Stored, with a key skipped: take it back whole (the keys and refs go with it).
		if _, err := t.exec(ctx, "DELETE FROM objects WHERE id = ?", o.ID); err != nil {
			return err
		}
	}
	var holders [][2]string
	if err := json.Unmarshal([]byte(taken), &holders); err != nil {
		return err
	}
	absent, err := decodeSet(missing)
	switch {
	case err != nil:
		return err
	case len(holders) > 0:
		first := slices.MinFunc(holders, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		return &store.DuplicateError{Key: first[0], HolderID: first[1]}
	case len(absent) > 0:
		return fmt.Errorf("%w: ref %s", store.ErrNotFound, absent[0])
	}
	return fmt.Errorf("%w: %s", store.ErrExists, o.ID) // taken by a transaction that committed since
}

// docColumns names the columns that store a document: for an INSERT (columns, values) and an
// UPDATE (assign).
type docColumns struct{ columns, values, assign string }

// setDoc is how a write stores o's document and secret, and its arguments: with doc_jsonb
// where the store writes that copy (SQLite); PostgreSQL generates it.
func (t *tx) setDoc(o *store.Object) (docColumns, []any) {
	if t.d.DocJSONB == "" {
		return docColumns{"doc, secret", "?, ?", "doc = ?, secret = ?"}, []any{o.Doc, t.seal(o)}
	}
	return docColumns{"doc, secret, doc_jsonb", "?, ?, " + t.d.DocJSONB, "doc = ?, secret = ?, doc_jsonb = " + t.d.DocJSONB},
		[]any{o.Doc, t.seal(o), o.Doc}
}

func (t *tx) Update(ctx context.Context, o *store.Object) error {
	if err := t.update(ctx, o); err != nil {
		return err
	}
	return t.wrote(ctx, o.Kind, o.AccountID)
}

func (t *tx) update(ctx context.Context, o *store.Object) error {
	keys, refs := encodeSet(o.UniqueKeys), encodeSet(o.Refs)
	// Most updates change neither keys nor refs: then one statement, all or nothing, needs no
	// savepoint, and reads no keys or refs (under SERIALIZABLE, every read of those indexes
	// conflicts with the transactions that write them).
	docs, args := t.setDoc(o)
	n, err := t.exec(ctx, "UPDATE objects SET "+docs.assign+" WHERE id = ? AND kind = ? AND key_set = ? AND ref_set = ?",
		append(args, o.ID, o.Kind, keys, refs)...)
	if err != nil || n == 1 {
		return err
	}
	return t.atomic(ctx, func() error {
		var stored struct{ keys, refs string }
		err := t.tx.QueryRowContext(ctx, t.d.rebind("SELECT key_set, ref_set FROM objects WHERE id = ? AND kind = ?"), o.ID, o.Kind).
			Scan(&stored.keys, &stored.refs)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s %s", store.ErrNotFound, o.Kind, o.ID)
		}
		if err != nil {
			return err
		}
		if _, err := t.exec(ctx, "UPDATE objects SET "+docs.assign+", key_set = ?, ref_set = ? WHERE id = ? AND kind = ?",
			append(args, keys, refs, o.ID, o.Kind)...); err != nil {
			return err
		}
		oldKeys, err := decodeSet(stored.keys)
		if err != nil {
			return err
		}
		oldRefs, err := decodeSet(stored.refs)
		if err != nil {
			return err
		}
		if !slices.Equal(oldKeys, set(o.UniqueKeys)) {
			if _, err := t.exec(ctx, "DELETE FROM unique_keys WHERE object_id = ?", o.ID); err != nil {
				return err
			}
			if err := t.claimKeys(ctx, o); err != nil {
				return err
			}
		}
		if !slices.Equal(oldRefs, set(o.Refs)) {
			if _, err := t.exec(ctx, "DELETE FROM refs WHERE from_id = ?", o.ID); err != nil {
				return err
			}
			return t.claimRefs(ctx, o)
		}
		return nil
	})
}

// claim records the unique keys and refs of o, which holds none yet.
func (t *tx) claim(ctx context.Context, o *store.Object) error {
	if err := t.claimKeys(ctx, o); err != nil {
		return err
	}
	return t.claimRefs(ctx, o)
}

// claimKeys records the unique keys of o, which holds none yet.
func (t *tx) claimKeys(ctx context.Context, o *store.Object) error {
	for _, key := range set(o.UniqueKeys) {
		n, err := t.exec(ctx, "INSERT INTO unique_keys (key, object_id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, o.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			var holder string
			if err := t.tx.QueryRowContext(ctx, t.d.rebind("SELECT object_id FROM unique_keys WHERE key = ?"), key).Scan(&holder); err != nil {
				return err
			}
			return &store.DuplicateError{Key: key, HolderID: holder}
		}
	}
	return nil
}

// claimRefs records the refs of o, which holds none yet.
func (t *tx) claimRefs(ctx context.Context, o *store.Object) error {
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
	rows, err := t.tx.QueryContext(ctx, t.d.rebind(`SELECT r.from_id FROM refs r JOIN objects o ON o.id = r.to_id
		WHERE r.to_id = ? AND o.kind = ? ORDER BY r.from_id DESC`), id, kind)
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
	var account string
	err = t.tx.QueryRowContext(ctx, t.d.rebind("DELETE FROM objects WHERE id = ? AND kind = ? RETURNING account_id"), id, kind).Scan(&account)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s %s", store.ErrNotFound, kind, id)
	}
	if err != nil {
		return err
	}
	return t.wrote(ctx, kind, account)
}

func (t *tx) DeleteAccount(ctx context.Context, accountID string) error {
	// Refs from other accounts into this one would dangle: refused, as Delete refuses.
	rows, err := t.tx.QueryContext(ctx, t.d.rebind(`SELECT r.from_id FROM refs r JOIN objects f ON f.id = r.from_id
		JOIN objects o ON o.id = r.to_id WHERE o.account_id = ? AND f.account_id <> ? ORDER BY r.from_id DESC`), accountID, accountID)
	if err != nil {
		return err
	}
	referrers, err := scanStrings(rows)
	if err != nil {
		return err
	}
	if len(referrers) > 0 {
		return &store.ReferencedError{ID: accountID, ReferrerIDs: referrers}
	}
	// The shared token buckets (PostgreSQL's rate_limits) are keyed "<scope>:<ID>", the ID
	// the account's or one of its objects'.
	if t.d.TakeTokens != "" {
		if _, err := t.exec(ctx, `DELETE FROM rate_limits WHERE substr(bucket, strpos(bucket, ':') + 1) IN
			(SELECT id FROM objects WHERE account_id = ?)`, accountID); err != nil {
			return err
		}
	}
	// The refs between the account's objects go first, so that no statement deletes an
	// object another still references (the foreign key on refs.to_id).
	if _, err := t.exec(ctx, "DELETE FROM refs WHERE from_id IN (SELECT id FROM objects WHERE account_id = ?)", accountID); err != nil {
		return err
	}
	rows, err = t.tx.QueryContext(ctx, t.d.rebind("DELETE FROM objects WHERE account_id = ? RETURNING kind"), accountID)
	if err != nil {
		return err
	}
	deleted, err := scanStrings(rows)
	if err != nil {
		return err
	}
	for _, stmt := range []string{"DELETE FROM deliveries WHERE account_id = ?", "DELETE FROM events WHERE account_id = ?"} {
		if _, err := t.exec(ctx, stmt, accountID); err != nil {
			return err
		}
	}
	// The routing revision is a sum that never moves back: the account's row is folded into
	// the row of no account, one more, so that the sum moves on and no row names the account.
	if _, err := t.exec(ctx, `INSERT INTO routing_revision (account_id, revision)
		SELECT '', revision + 1 FROM routing_revision WHERE account_id = ?
		ON CONFLICT (account_id) DO UPDATE SET revision = routing_revision.revision + excluded.revision`, accountID); err != nil {
		return err
	}
	if _, err := t.exec(ctx, "DELETE FROM routing_revision WHERE account_id = ?", accountID); err != nil {
		return err
	}
	if t.written == nil {
		t.written = map[string]bool{}
	}
	for _, kind := range deleted {
		t.written[kind] = true
	}
	return nil
}

// scanStrings reads the one text column of rows and closes them.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (t *tx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, t.d.rebind(query), args...)
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
