// Package pgcluster starts a throwaway PostgreSQL cluster from the machine's PostgreSQL
// binaries (as the postgres OS user, listening on a unix socket only) for tests and for
// make bench, and hands out empty databases in it.
package pgcluster

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver, as the store uses
)

// SkipEnv names the variable that skips the PostgreSQL tests where PostgreSQL is missing.
const SkipEnv = "WARREN_SKIP_POSTGRES"

// Options choose how the cluster runs.
type Options struct {
	// Durable keeps fsync and synchronous commit on, as a production cluster runs; tests
	// leave it off for speed, benchmarks that compare durable writes turn it on.
	Durable bool
	// Port is the unix socket's port number; 0 picks one from the process ID.
	Port int
}

// Cluster is a running throwaway cluster.
type Cluster struct {
	// DSN reaches the cluster's postgres database (append " dbname=…" for another).
	DSN string

	dir, data, bin string
	settings       string // the server's options, for Up
	count          atomic.Int32
}

// Start initialises and starts a cluster in a new temporary directory.
func Start(opts Options) (*Cluster, error) {
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(found) == 0 {
			return nil, errors.New("no initdb under /usr/lib/postgresql/*/bin (set PG_BIN)")
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
	c := &Cluster{dir: dir, data: filepath.Join(dir, "data"), bin: bin}
	port := opts.Port
	if port == 0 {
		port = 20000 + os.Getpid()%20000
	}
	initArgs := []string{"-D", c.data, "-A", "trust", "-U", "postgres"}
	settings := fmt.Sprintf("-k %s -p %d -c listen_addresses='' -c max_connections=200", dir, port)
	if !opts.Durable {
		initArgs = append(initArgs, "--no-sync")
		settings += " -c fsync=off -c synchronous_commit=off"
	}
	if err := c.run("initdb", initArgs...); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.settings = settings
	if err := c.Up(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.DSN = fmt.Sprintf("host=%s port=%d user=postgres sslmode=disable", dir, port)
	return c, nil
}

func (c *Cluster) run(name string, args ...string) error {
	out, err := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, name)}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// NewDatabase creates an empty database and returns its DSN.
func (c *Cluster) NewDatabase() (string, error) {
	name := fmt.Sprintf("t_%d", c.count.Add(1))
	admin, err := sql.Open("pgx", c.DSN+" dbname=postgres")
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		return "", err
	}
	return c.DSN + " dbname=" + name, nil
}

// Up starts the server and returns once it accepts connections.
func (c *Cluster) Up() error {
	return c.run("pg_ctl", "-D", c.data, "-o", c.settings, "-l", filepath.Join(c.dir, "log"), "-w", "start")
}

// Down shuts the server down as an operator's restart does (fast: open sessions are ended,
// no new ones accepted) and returns once it is down; its files stay for Up.
func (c *Cluster) Down() error {
	return c.run("pg_ctl", "-D", c.data, "-m", "fast", "-w", "stop")
}

// Stop stops the cluster at once and removes its files.
func (c *Cluster) Stop() {
	_ = c.run("pg_ctl", "-D", c.data, "-m", "immediate", "stop")
	os.RemoveAll(c.dir)
}

// The shared cluster of a test binary: started on first use, stopped by RunTests.
var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
)

// RunTests runs a package's tests and stops the shared cluster if one was started; call it
// from TestMain: os.Exit(pgcluster.RunTests(m)).
func RunTests(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	return code
}

// Database returns the DSN of a new empty database in the test binary's shared cluster. It
// skips the test when WARREN_SKIP_POSTGRES=1 and fails it when PostgreSQL cannot start.
func Database(t testing.TB) string {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skip(SkipEnv + "=1")
	}
	sharedOnce.Do(func() { shared, sharedErr = Start(Options{}) })
	if sharedErr != nil {
		t.Fatalf("cannot start a PostgreSQL cluster: %v (install PostgreSQL (initdb, pg_ctl) and run as root with a postgres user, or set %s=1)", sharedErr, SkipEnv)
	}
	dsn, err := shared.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// Own starts a cluster of the test's own, which it may take down and bring up (Down, Up)
// without disturbing the tests on the shared one; it is removed when the test ends. Like
// Database, it skips the test when WARREN_SKIP_POSTGRES=1.
func Own(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skip(SkipEnv + "=1")
	}
	c, err := Start(Options{})
	if err != nil {
		t.Fatalf("cannot start a PostgreSQL cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// DatabaseURL is Database as a postgres:// URL (the unix socket directory in its host
// parameter), the form warren-apiserver's --database takes.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	return URL(Database(t))
}

// URL turns a key=value DSN of this package (host, port, user, dbname, sslmode) into a
// postgres:// URL.
func URL(dsn string) string {
	q := url.Values{}
	var user, db string
	for _, f := range strings.Fields(dsn) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "user":
			user = v
		case "dbname":
			db = v
		default:
			q.Set(k, v)
		}
	}
	return (&url.URL{Scheme: "postgres", User: url.User(user), Path: "/" + db, RawQuery: q.Encode()}).String()
}
