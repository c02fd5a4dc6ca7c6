package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/storetest"
)

func openPath(tb testing.TB, path string) *Store {
	tb.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func open(tb testing.TB) *Store {
	return openPath(tb, filepath.Join(tb.TempDir(), "store.db"))
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "store.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestPragmas(t *testing.T) {
	s := open(t)
	for _, c := range []struct {
		read         bool
		pragma, want string
	}{
		{false, "journal_mode", "wal"},
		{false, "synchronous", "2"}, // FULL
		{false, "foreign_keys", "1"},
		{false, "busy_timeout", "5000"},
		{true, "query_only", "1"},
		{true, "foreign_keys", "1"},
	} {
		write, read := s.DB()
		db, pool := write, "write"
		if c.read {
			db, pool = read, "read"
		}
		var got string
		if err := db.QueryRow("PRAGMA " + c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s pool: PRAGMA %s = %s, want %s", pool, c.pragma, got, c.want)
		}
	}
}

// TestReopen checks that a second Open of a migrated database keeps its data.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	insert(t, s, "t_0001")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkStored(t, openPath(t, path), "t_0001")
}

// TestFilesArePrivate: a new database and its WAL files are its owner's only (0600), like
// its key; an existing database keeps its mode.
func TestFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := openPath(t, path)
	insert(t, s, "t_0001") // the WAL and its index exist while the store is open
	for _, f := range Files(path) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
	shared := filepath.Join(t.TempDir(), "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	openPath(t, shared)
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing database's mode changed: %v, %v", fi.Mode(), err)
	}
}

// TestTwoStores shares one file between two Stores, as two processes would: BEGIN IMMEDIATE
// and busy_timeout make their writers wait for each other instead of failing with SQLITE_BUSY.
func TestTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	stores := []*Store{openPath(t, path), openPath(t, path)}
	insert(t, stores[0], "t_0001")
	const n = 10
	var wg sync.WaitGroup
	for i := range 2 * n {
		s := stores[i%2]
		wg.Go(func() {
			err := s.Write(t.Context(), func(tx store.Tx) error {
				o, err := tx.Get(t.Context(), "thing", "t_0001")
				if err != nil {
					return err
				}
				o.Doc = []byte("[" + string(o.Doc) + "]") // one level deeper, still JSON (the filter indexes read it)
				return tx.Update(t.Context(), o)
			})
			if err != nil {
				t.Errorf("Write: %v", err)
			}
		})
	}
	wg.Wait()
	o := checkStored(t, stores[1], "t_0001")
	if got := strings.Count(string(o.Doc), "["); got != 2*n {
		t.Errorf("%d increments survived, want %d", got, 2*n)
	}
}

func insert(tb testing.TB, s *Store, id string) {
	tb.Helper()
	err := s.Write(context.Background(), func(tx store.Tx) error {
		return tx.Insert(context.Background(), &store.Object{Kind: "thing", ID: id, AccountID: "ac_1", Doc: []byte(`{}`)})
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func checkStored(t *testing.T, s *Store, id string) (o *store.Object) {
	t.Helper()
	err := s.Read(t.Context(), func(tx store.Tx) (err error) {
		o, err = tx.Get(t.Context(), "thing", id)
		return err
	})
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	return o
}

const crashEnv = "STORE_SQLITE_CRASH_DB"

// TestCrash kills a writing process with SIGKILL and checks that every write it saw
// acknowledged survives.
func TestCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.timeout=30s")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			acked = append(acked, id)
		}
		if len(acked) == 50 {
			// Kill while the child is mid-stream; lines still in the pipe were acknowledged too.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	if len(acked) < 50 {
		t.Fatalf("child acknowledged only %d writes", len(acked))
	}

	s := openPath(t, path)
	for _, id := range acked {
		checkStored(t, s, id)
	}
	var check string
	_, read := s.DB()
	if err := read.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %s %v", check, err)
	}
	t.Logf("%d acknowledged writes survived", len(acked))
}

// TestCrashHelper is the child of TestCrash: it writes until killed, printing each ID once
// Write has returned.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestCrash")
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100_000 { // bounded in case the parent never kills it
		id := fmt.Sprintf("t_%06d", i)
		insert(t, s, id)
		fmt.Println("acked", id)
	}
}

func BenchmarkInsert(b *testing.B) {
	s := open(b)
	i := 0
	for b.Loop() {
		insert(b, s, "t_"+strconv.Itoa(i))
		i++
	}
}

// fill inserts n objects in one transaction.
func fill(b *testing.B, s *Store, n int) {
	err := s.Write(context.Background(), func(tx store.Tx) error {
		for i := range n {
			o := &store.Object{Kind: "thing", ID: fmt.Sprintf("t_%06d", i), AccountID: "ac_1",
				Doc:        []byte(`{"name":"thing","description":"a typical document of a few hundred bytes"}`),
				UniqueKeys: []string{fmt.Sprintf("name:%d", i)}}
			if err := tx.Insert(context.Background(), o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGet(b *testing.B) {
	const n = 1000
	s := open(b)
	fill(b, s, n)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		err := s.Read(ctx, func(tx store.Tx) error {
			_, err := tx.Get(ctx, "thing", fmt.Sprintf("t_%06d", i%n))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkList(b *testing.B) {
	s := open(b)
	fill(b, s, 1000)
	ctx := context.Background()
	for b.Loop() {
		err := s.Read(ctx, func(tx store.Tx) error {
			objs, err := tx.List(ctx, store.ListQuery{Kind: "thing", AccountID: "ac_1", BeforeID: "t_000500", Limit: 50})
			if len(objs) != 50 {
				return fmt.Errorf("listed %d objects: %v", len(objs), err)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenNamesThePath: a path the driver cannot use gives an error in plain words that
// names it, and creates nothing.
func TestOpenNamesThePath(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "w.db"), "the directory " + filepath.Join(dir, "missing") + " does not exist"},
		{filepath.Join(garbage, "w.db"), garbage + " is not a directory"},
		{dir, dir + " is a directory"},
		{garbage, garbage + ": migrate"},
	} {
		_, err := Open(t.Context(), tt.path)
		if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) = %v, want an error naming the path and saying %q", tt.path, err, tt.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("Open created files: %v", entries)
	}
}

func TestSealing(t *testing.T) {
	storetest.Sealing(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "store.db") }, Open)
}

// TestUpgradeDocJSONB: a database with objects from before migration 00007 filters them
// after it.
func TestUpgradeDocJSONB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	old, err := openDB(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	p, err := migrations(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), 6); err != nil {
		t.Fatal(err)
	}
	storetest.DocJSONBUpgrade(t, old, "BLOB", func() store.Store { return openPath(t, path) })
}
