package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// TestBackupUnderLoad: a backup taken while writers commit holds every write acknowledged
// before it began, restores over a database, and the restored database is sound.
func TestBackupUnderLoad(t *testing.T) {
	dir := t.TempDir()
	live := openPath(t, filepath.Join(dir, "live.db"))
	const writers = 4
	var (
		mu    sync.Mutex
		acked []string // IDs whose Write returned nil
		stop  = make(chan struct{})
		wg    sync.WaitGroup
		errs  = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("t_%d_%06d", w, i)
				err := live.Write(t.Context(), func(tx store.Tx) error {
					return tx.Insert(t.Context(), &store.Object{Kind: "thing", ID: id, AccountID: "ac_1", Doc: []byte(`{}`), UniqueKeys: []string{"k:" + id}})
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		})
	}
	// Let the writers commit a good many, then take the backup while they go on.
	for n := 0; n < 200; time.Sleep(time.Millisecond) {
		mu.Lock()
		n = len(acked)
		mu.Unlock()
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	backup := filepath.Join(dir, "backup.db")
	if err := Backup(t.Context(), filepath.Join(dir, "live.db"), backup); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	mu.Lock()
	during := len(acked) - len(before)
	mu.Unlock()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a writer failed during the backup: %v", err)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup file: %v, %v; want mode 0600", fi.Mode(), err)
	}

	// Restored over another database (with a write-ahead log of its own), it holds them all.
	target := filepath.Join(dir, "restored.db")
	old := openPath(t, target)
	if err := old.Write(t.Context(), func(tx store.Tx) error {
		return tx.Insert(t.Context(), &store.Object{Kind: "thing", ID: "t_old", AccountID: "ac_1", Doc: []byte(`{}`)})
	}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	if err := Restore(t.Context(), backup, target); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if err := Check(t.Context(), target); err != nil {
		t.Fatalf("the restored database: %v", err)
	}
	restored := openPath(t, target)
	if err := restored.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	err := restored.Read(t.Context(), func(tx store.Tx) error {
		for _, id := range before {
			o, err := tx.Lookup(t.Context(), "k:"+id) // its unique key too: the indexes agree
			if err != nil {
				return fmt.Errorf("%s, acknowledged before the backup: %w", id, err)
			}
			if o.ID != id {
				return fmt.Errorf("the key of %s is held by %s", id, o.ID)
			}
		}
		if _, err := tx.Get(t.Context(), "thing", "t_old"); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("the replaced database's object: %v, want it gone", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d writes acknowledged before the backup, %d while it ran", len(before), during)
}

func TestBackupRefuses(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	openPath(t, live)
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Backup(t.Context(), live, exists); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Backup onto an existing file: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(exists); string(b) != "keep" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if err := Backup(t.Context(), filepath.Join(dir, "missing.db"), filepath.Join(dir, "b.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup of a missing database: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup created the missing database")
	}
	// A file that is no database is not restored, and the database stays.
	if err := Restore(t.Context(), exists, live); err == nil {
		t.Error("Restore of a file that is no database: no error")
	}
	if err := Check(t.Context(), live); err != nil {
		t.Errorf("the database after a refused restore: %v", err)
	}
}
