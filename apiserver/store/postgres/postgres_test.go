package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/storetest"
)

// The tests run against a throwaway PostgreSQL cluster that TestMain starts from the
// PostgreSQL binaries of the machine (as the postgres OS user, listening on a unix socket
// only) and removes afterwards. WARREN_SKIP_POSTGRES=1 skips them where PostgreSQL is missing.

var (
	cluster string // DSN of the cluster's postgres database
	dbCount atomic.Int32
)

func TestMain(m *testing.M) {
	if os.Getenv("WARREN_SKIP_POSTGRES") == "1" {
		os.Exit(m.Run())
	}
	stop, err := startCluster()
	if err != nil {
		fmt.Fprintln(os.Stderr, "postgres tests: cannot start a PostgreSQL cluster:", err)
		fmt.Fprintln(os.Stderr, "install PostgreSQL (initdb, pg_ctl) and run as root with a postgres user, or set WARREN_SKIP_POSTGRES=1")
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startCluster() (stop func(), err error) {
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(found) == 0 {
			return nil, fmt.Errorf("no initdb under /usr/lib/postgresql/*/bin (set PG_BIN)")
		}
		bin = filepath.Dir(found[len(found)-1])
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "warren-pg-")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	asPostgres := func(name string, args ...string) error {
		out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", name, err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	port := strconv.Itoa(20000 + os.Getpid()%20000)
	if err := asPostgres("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := fmt.Sprintf("-k %s -p %s -c listen_addresses='' -c fsync=off", dir, port)
	if err := asPostgres("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cluster = fmt.Sprintf("host=%s port=%s user=postgres sslmode=disable", dir, port)
	return func() {
		_ = asPostgres("pg_ctl", "-D", data, "-m", "immediate", "stop")
		os.RemoveAll(dir)
	}, nil
}

// freshDatabase creates an empty database and returns its DSN.
func freshDatabase(t testing.TB) string {
	t.Helper()
	if cluster == "" {
		t.Skip("WARREN_SKIP_POSTGRES=1")
	}
	name := fmt.Sprintf("t_%d", dbCount.Add(1))
	admin, err := sql.Open("pgx", cluster+" dbname=postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return cluster + " dbname=" + name
}

func open(t *testing.T) store.Store {
	t.Helper()
	s, err := Open(context.Background(), freshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) { storetest.Run(t, open) }

// TestReopen checks that a second Open of a migrated database keeps its data.
func TestReopen(t *testing.T) {
	dsn := freshDatabase(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	obj := &store.Object{Kind: "k", ID: "k_1", AccountID: "ac_1", Doc: []byte(`{"a":1}`), UniqueKeys: []string{"u"}}
	if err := s.Write(ctx, func(tx store.Tx) error { return tx.Insert(ctx, obj) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Read(ctx, func(tx store.Tx) error {
		got, err := tx.Lookup(ctx, "u")
		if err == nil && (got.ID != "k_1" || string(got.Doc) != `{"a":1}`) {
			err = fmt.Errorf("got %+v", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkInsert(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, freshDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i := 0
	for b.Loop() {
		i++
		obj := &store.Object{Kind: "k", ID: fmt.Sprintf("k_%09d", i), AccountID: "ac_1", Doc: []byte(`{}`)}
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.Insert(ctx, obj) }); err != nil {
			b.Fatal(err)
		}
	}
}
