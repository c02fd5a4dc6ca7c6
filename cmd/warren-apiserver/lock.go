package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// errDatabaseInUse is the start refused because another server holds the SQLite database.
var errDatabaseInUse = errors.New("database in use")

// lockDatabase takes an exclusive flock on <database>.lock, held until release or the
// process ends: two servers on one SQLite file would each take the other's work as their
// own (its agent sessions, delivery leases) while both answer /readyz. A separate file,
// because SQLite's own locks on the database are POSIX record locks, which any close of
// another descriptor of that file in the process would drop. release removes the lock
// file too when remove is true and this call created it (a failed start leaves nothing).
func lockDatabase(database string) (release func(remove bool), err error) {
	path := database + ".lock"
	_, statErr := os.Lstat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: another warren-apiserver is serving the database %s (it holds %s); stop it first, or give this one another --database", errDatabaseInUse, database, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func(remove bool) {
		if remove && created {
			_ = os.Remove(path) // while still held: no other start can have taken it
		}
		f.Close()
	}, nil
}
