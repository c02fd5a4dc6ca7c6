package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
)

// errPostgresBackup: backup and restore copy a SQLite database; PostgreSQL has its own tools.
var errPostgresBackup = errors.New("backup and restore copy the embedded SQLite database; back up a PostgreSQL database with pg_dump and restore it with pg_restore (see the README's Backups section)")

// backup writes a consistent copy of the live SQLite database (--database) to file, while a
// server may be serving it.
func backup(ctx context.Context, cfg *config, file string, stdout io.Writer) error {
	if isPostgres(cfg.database) {
		return errPostgresBackup
	}
	if err := sqlite.Backup(ctx, cfg.database, file); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s; keep the secret key (%s or --secret-key) apart from it: the backup's secrets are sealed with it\n", cfg.database, file, cfg.database+".key")
	return nil
}

// restore replaces the SQLite database (--database) with the backup file, refused while a
// server serves the database (its lock).
func restore(ctx context.Context, cfg *config, file string, stdout io.Writer) error {
	if isPostgres(cfg.database) {
		return errPostgresBackup
	}
	release, err := lockDatabase(cfg.database)
	if err != nil {
		return err
	}
	defer release(true)
	if err := sqlite.Restore(ctx, file, cfg.database); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s\n", cfg.database, file)
	return nil
}
