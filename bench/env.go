package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// env is what the sections share: a scratch directory, a durable PostgreSQL cluster started
// on first use, and the run's size.
type env struct {
	quick    bool
	dir      string
	profiles string // where a section writes the profiles its report names

	pgOnce sync.Once
	pg     *pgcluster.Cluster
	pgErr  error
}

// newEnv makes the scratch directory; profiles go to bench/profiles beside the report out
// (or to the scratch directory when there is none).
func newEnv(quick bool, out string) (*env, error) {
	dir, err := os.MkdirTemp("", "warren-bench-")
	if err != nil {
		return nil, err
	}
	profiles := filepath.Join(dir, "profiles")
	if out != "" {
		profiles = filepath.Join(filepath.Dir(out), "bench", "profiles")
	}
	return &env{quick: quick, dir: dir, profiles: profiles}, nil
}

func (e *env) close() {
	if e.pg != nil {
		e.pg.Stop()
	}
	os.RemoveAll(e.dir)
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// size picks the full-run or the quick-run value.
func size[T any](e *env, full, quick T) T {
	if e.quick {
		return quick
	}
	return full
}

// buildProgram builds src, a main package of the standard library alone, into a binary named
// name in the scratch directory, for a floor or a client that must run as its own process.
func (e *env) buildProgram(ctx context.Context, name, src string) (string, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "main.go")
	build.Dir, build.Env = dir, append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", name, err, out)
	}
	return bin, nil
}

// postgresDatabase returns the DSN of a new empty database in a durable cluster (fsync and
// synchronous commit on, as in production).
func (e *env) postgresDatabase() (string, error) {
	e.pgOnce.Do(func() {
		e.pg, e.pgErr = pgcluster.Start(pgcluster.Options{Durable: true, Port: 40000 + os.Getpid()%20000})
	})
	if e.pgErr != nil {
		return "", fmt.Errorf("PostgreSQL: %w", e.pgErr)
	}
	return e.pg.NewDatabase()
}

// database kinds a section can run Warren on.
const (
	onSQLite   = "SQLite"
	onPostgres = "PostgreSQL"
)

// benchKeys seal the stores' secrets, as warren-apiserver always does.
var benchKeys, _ = sealing.NewKeyring(sealing.GenerateKey())

// openStore opens a new empty store of the kind.
func (e *env) openStore(ctx context.Context, kind string) (store.Store, error) {
	switch kind {
	case onSQLite:
		dir, err := os.MkdirTemp(e.dir, "sqlite-")
		if err != nil {
			return nil, err
		}
		return sqlite.Open(ctx, filepath.Join(dir, "warren.db"), sqlstore.WithKeys(benchKeys))
	case onPostgres:
		dsn, err := e.postgresDatabase()
		if err != nil {
			return nil, err
		}
		return postgres.Open(ctx, dsn, sqlstore.WithKeys(benchKeys))
	}
	return nil, fmt.Errorf("unknown database %q", kind)
}

// warren is a Warren server running in this process on a real TCP listener, with the
// server's defaults unless configure changes them.
type warren struct {
	URL, Token string
	Store      store.Store
	Server     *apiserver.Server
	Conns      atomic.Int64 // TCP connections accepted so far: how well clients reuse theirs
	close      func()
}

func (e *env) startWarren(ctx context.Context, db store.Store, configure ...func(*apiserver.Options)) (*warren, error) {
	w := &warren{Token: ids.NewToken(ids.New(ids.APIKey)), Store: db}
	var handler http.Handler
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { handler.ServeHTTP(rw, r) }))
	ts.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			w.Conns.Add(1)
		}
	}
	ts.Start()
	opts := apiserver.Options{Store: db, BaseURL: ts.URL, BootstrapAPIKey: w.Token}
	for _, f := range configure {
		f(&opts)
	}
	srv, err := apiserver.New(ctx, opts)
	if err != nil {
		ts.Close()
		return nil, err
	}
	handler, w.Server, w.URL = srv, srv, ts.URL
	w.close = func() { ts.Close(); _ = srv.Close() }
	return w, nil
}

// Close stops the server and closes its store.
func (w *warren) Close() {
	w.close()
	_ = w.Store.Close()
}

// noRateLimit turns the rate limit and the cap on simultaneous requests off, for sections
// that send more than any allowance.
func noRateLimit(o *apiserver.Options) { o.RateLimit, o.MaxConcurrentRequests = -1, -1 }
