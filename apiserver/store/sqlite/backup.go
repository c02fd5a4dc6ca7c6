package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database at path, which a server may be serving
// and writing at the time, to the new file dest: SQLite's VACUUM INTO, one read transaction,
// so the copy holds exactly the transactions committed before it began. The copy is synced
// to disk and checked (integrity_check) before Backup returns. dest must not exist.
func Backup(ctx context.Context, path, dest string) (err error) {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: backup of %s: %w", path, err)
	}
	if err := CheckPath(dest); err != nil {
		return err
	}
	f, err := os.OpenFile(dest, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) // VACUUM INTO fills an empty file
	if err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(dest)
		}
	}()
	db, err := openDB(path, "")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dest); err != nil {
		return fmt.Errorf("sqlite: backup of %s to %s: %w", path, dest, err)
	}
	// VACUUM INTO does not sync what it wrote.
	if err := syncFile(dest); err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	return Check(ctx, dest)
}

// Check opens the database file at path read-only and runs SQLite's integrity_check on it;
// it fails unless the file is a sound database of this server (goose's version table).
func Check(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&result); err != nil {
		return fmt.Errorf("sqlite: %s: %w", path, err)
	}
	if result != "ok" {
		return fmt.Errorf("sqlite: %s fails SQLite's integrity check: %s", path, result)
	}
	var version int64
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&version); err != nil {
		return fmt.Errorf("sqlite: %s is not a warren-apiserver database: %w", path, err)
	}
	return nil
}

// Restore replaces the database at path with the copy backup (one Backup wrote), which it
// checks first. No server may have the database open: the caller makes sure of that (the
// command holds the server's lock). The old database's write-ahead log goes with it, or
// SQLite would replay it onto the restored file; the copy is renamed into place, so a crash
// leaves the old database or the new one.
func Restore(ctx context.Context, backup, path string) error {
	if err := Check(ctx, backup); err != nil {
		return err
	}
	if err := CheckPath(path); err != nil {
		return err
	}
	tmp := path + ".restoring"
	if err := copyFile(backup, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sqlite: restore %s: %w", path, err)
	}
	for _, f := range Files(path)[1:] {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			os.Remove(tmp)
			return fmt.Errorf("sqlite: restore %s: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sqlite: restore %s: %w", path, err)
	}
	return syncFile(filepath.Dir(path))
}

// copyFile copies src to the new file dst (0600) and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncFile flushes a file or a directory (its entries) to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
