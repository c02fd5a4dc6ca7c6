// Package postgres implements store.Store on PostgreSQL through pgx, so that several
// stateless server replicas can share one database.
//
// It runs the same queries as the SQLite store (package sqlstore). Write transactions are
// SERIALIZABLE: PostgreSQL aborts one of two conflicting transactions, and Write runs the
// aborted one again. Nothing is cached in the process, since other replicas write too.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// idleConns is how many idle connections a Store keeps open for reuse.
const idleConns = 64

// Store is a store.Store on a PostgreSQL database.
type Store = sqlstore.Store

var dialect = sqlstore.Dialect{
	Numbered:     true,
	WritableCTE:  true,
	JSON:         sqlstore.PostgresJSON,
	ReadOptions:  sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
	WriteOptions: sql.TxOptions{Isolation: sql.LevelSerializable},
	SkipLocked:   " FOR UPDATE SKIP LOCKED",
	ForUpdate:    " FOR UPDATE",
	Retryable:    retryable,
	Unavailable:  unavailable,
	TakeTokens:   takeTokens,
}

// refill is what a bucket holds at now ($5) before the take: what it held plus what it
// gained since, at most its size ($3); a clock that went back gains nothing.
const refill = `least($3::float8, b.tokens + greatest($5::bigint - b.updated_at, 0) * $3::float8 / $4::bigint)`

// takeTokens takes min(want ($2), whole tokens held) from a bucket (rate_limits, 00003) in
// one statement: the upsert's row lock orders concurrent takes of one bucket.
const takeTokens = `INSERT INTO rate_limits AS b (bucket, tokens, updated_at, taken)
VALUES ($1, $3::float8 - least($2::bigint, $3::bigint), $5::bigint, least($2::bigint, $3::bigint))
ON CONFLICT (bucket) DO UPDATE SET
	taken = least($2::float8, floor(` + refill + `)),
	tokens = ` + refill + ` - least($2::float8, floor(` + refill + `)),
	updated_at = greatest(b.updated_at, $5::bigint)
RETURNING taken, tokens`

// retryable: a serialization failure or a deadlock; running the transaction again may pass.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// unavailable: the database cannot be reached or is not taking work now, so the same call
// may pass later. A server error counts by its SQLSTATE: class 08 (connection exception),
// 57P01/57P02 (the server ended the session: shutdown, crash of another backend), 57P03
// (starting up or shutting down), 53300 (too many connections). Otherwise: connecting
// failed (*pgconn.ConnectError: refused, no socket, timeout), the connection failed
// (*net.OpError, pgconn's own connection errors, a message cut short), or database/sql
// found the connection dead. A caller that gave up (context.Canceled) is not an outage;
// neither are refused credentials, a missing database or any other SQLSTATE.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	// pgconn's errors about the connection (closed, failed to receive or send, timed out)
	// are the ones that say whether sending again is safe.
	if _, ok := errors.AsType[interface {
		error
		SafeToRetry() bool
	}](err); ok {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone)
}

// Open connects to the database at dsn (a postgres:// URL or a key=value string) and
// migrates it to the current schema. With sqlstore.WithKeys, secrets are sealed and the key
// is checked against the database.
func Open(ctx context.Context, dsn string, opts ...sqlstore.Option) (*Store, error) {
	return OpenTraced(ctx, dsn, nil, opts...)
}

// OpenTraced is Open with a pgx tracer that sees every statement the store sends (nil for
// none): the tests count the round trips of each store operation with it.
func OpenTraced(ctx context.Context, dsn string, tracer pgx.QueryTracer, opts ...sqlstore.Option) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn) // its errors leave the password out
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	cfg.Tracer = tracer
	// Every query of the store has an index to use. On a small table the planner would
	// rather scan it whole, and under SERIALIZABLE a scan locks the whole relation against
	// every writer: measured, the main source of serialization failures between replicas.
	// Set at connection start-up, so it costs no round trip.
	cfg.RuntimeParams["enable_seqscan"] = "off"
	db := stdlib.OpenDB(*cfg)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	// database/sql keeps 2 idle connections by default: under concurrent requests every
	// other transaction would open (fork) a new backend, the biggest cost of a request when
	// measured. The pool stays unbounded (a handler never waits for a connection another
	// holds); idle ones are kept for reuse, and closed after a while of no use.
	db.SetMaxIdleConns(idleConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	schema, err := migrate(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	d := dialect
	d.Schema = schema
	s := sqlstore.New(db, db, d, opts...)
	if err := s.CheckKeys(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// migrate brings the database to the newest migration and returns that one's version.
func migrate(ctx context.Context, db *sql.DB) (int64, error) {
	p, err := migrations(db)
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	sources := p.ListSources()
	return sources[len(sources)-1].Version, nil
}

// migrations are the schema's migrations over db.
func migrations(db *sql.DB) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	return p, nil
}
