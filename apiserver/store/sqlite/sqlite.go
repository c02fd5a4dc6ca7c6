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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pressly/goose/v3"
	sqlitedriver "modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// readConns bounds the read pool; every SQLite connection holds its own page cache.
const readConns = 8

// Store is a store.Store on one SQLite database file.
type Store = sqlstore.Store

// dialect: SQLite serializes writers itself (BEGIN IMMEDIATE on one connection), so a write
// practically never needs to run again; retryable names the one error that asks for it.
var dialect = sqlstore.Dialect{
	Unavailable: unavailable,
	JSON:        sqlstore.SQLiteJSON,
	DocJSONB:    "jsonb(CAST(? AS TEXT))",
	ReadOptions: sql.TxOptions{ReadOnly: true},
	Retryable:   retryable,
	Prepare:     true,
}

// retryable: SQLITE_BUSY_SNAPSHOT, SQLite's serialization failure (another connection wrote
// after this transaction took its snapshot; running it again reads the new one). A plain
// SQLITE_BUSY is not: the lock was already waited for for busy_timeout.
func retryable(err error) bool {
	e, ok := errors.AsType[*sqlitedriver.Error](err)
	return ok && e.Code() == sqlite3.SQLITE_BUSY_SNAPSHOT
}

// unavailable: the file is in this process, so nothing is "unreachable" the way a server
// is; what passes later without anyone fixing the request is a lock another process held
// past busy_timeout (SQLITE_BUSY), a race on the WAL's locks (SQLITE_PROTOCOL), and a file
// that cannot be opened now (SQLITE_CANTOPEN: a volume away, no file descriptors left).
// A full disk, I/O errors or corruption stay internal errors: waiting does not fix them.
func unavailable(err error) bool {
	sqliteErr, ok := errors.AsType[*sqlitedriver.Error](err)
	if !ok {
		return false
	}
	switch sqliteErr.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// Open opens (creating if needed) the database at path and migrates it to the current schema.
// path is a file name; it must not contain '?'. Errors name the path. With
// sqlstore.WithKeys, secrets are sealed and the key is checked against the database.
func Open(ctx context.Context, path string, opts ...sqlstore.Option) (*Store, error) {
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	db, err := openStore(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return db, nil
}

// Files returns the files a database at path consists of: the database itself and, in WAL
// mode, its write-ahead log and shared-memory index. A caller that wants to undo the
// creation of a database removes those of them that did not exist before.
func Files(path string) []string {
	return []string{path, path + "-wal", path + "-shm"}
}

// CheckPath says in plain words what the driver would report cryptically ("out of memory",
// "unable to open database file"): a missing directory, or a directory in place of the file.
func CheckPath(path string) error {
	if path == "" {
		return errors.New("sqlite: the database path is empty")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("sqlite: %s is a directory, not a database file", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: cannot create the database %s: the directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("sqlite: %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("sqlite: cannot create the database %s: %s is not a directory", path, dir)
	}
	return nil
}

// createPrivate creates a missing database file readable by its owner only (0600), like its
// key file: it holds every object of every account. SQLite creates the -wal and -shm files
// with the database's mode. An existing file keeps its mode, which is its owner's choice.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// Closing is safe: no SQLite connection of this process can have a file open that did
	// not exist, so no POSIX lock of one is dropped.
	return f.Close()
}

func openStore(ctx context.Context, path string, opts []sqlstore.Option) (*Store, error) {
	// synchronous is per connection, and only the writer commits.
	write, err := openDB(path, "_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	schema, err := migrate(ctx, write)
	if err != nil {
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
	d := dialect
	d.Schema = schema
	s := sqlstore.New(write, read, d, opts...)
	if err := s.CheckKeys(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func openDB(path, params string) (*sql.DB, error) {
	// busy_timeout covers the short locks readers can still meet (checkpoints, WAL recovery)
	// and writers in other processes.
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&"+params)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// migrate brings the database to the newest migration and returns that one's version.
func migrate(ctx context.Context, db *sql.DB) (int64, error) {
	p, err := migrations(db)
	if err != nil {
		return 0, err
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
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
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}
