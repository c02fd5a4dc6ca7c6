package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// guard bounds every wait of these tests, so a broken timeout fails them instead of hanging.
// It is far above the timeouts under test; nothing asserts on elapsed time.
const guard = 10 * time.Second

// startHTTP serves h with the timeouts of cfg on a real listener and returns its address.
func startHTTP(t *testing.T, cfg *config, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(cfg, h, zap.NewNop())
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// trickle writes one byte every 20ms until the connection refuses it or the test ends.
func trickle(t *testing.T, conn net.Conn, b byte) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
}

// closedByServer reads until the server closes the connection; it fails when the guard
// expires first (the server kept the connection open).
func closedByServer(t *testing.T, r io.Reader, conn net.Conn) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(guard))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept the connection open")
	}
}

func timeouts(readHeader, read, idle time.Duration) *config {
	return &config{readHeaderTimeout: readHeader, readTimeout: read, writeTimeout: time.Minute, idleTimeout: idle}
}

// TestTrickledBodyIsCutOff: a client that sends its headers and then its body slower than
// the read timeout loses the connection; the handler sees the read fail.
func TestTrickledBodyIsCutOff(t *testing.T) {
	bodyErr := make(chan error, 1)
	addr := startHTTP(t, timeouts(time.Minute, 200*time.Millisecond, time.Minute), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		bodyErr <- err
	}))
	conn := dial(t, addr)
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: warren.test\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	trickle(t, conn, 'a')
	closedByServer(t, conn, conn)
	select {
	case err := <-bodyErr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the handler's body read ended with %v, want the read deadline", err)
		}
	case <-time.After(guard):
		t.Fatal("the handler never finished reading the body")
	}
}

// TestTrickledHeadersAreCutOff: a client that never finishes its headers loses the
// connection after the read-header timeout; no handler runs.
func TestTrickledHeadersAreCutOff(t *testing.T) {
	addr := startHTTP(t, timeouts(200*time.Millisecond, time.Minute, time.Minute), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a handler ran for a request whose headers never ended")
	}))
	conn := dial(t, addr)
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: warren.test\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	trickle(t, conn, 'a')
	closedByServer(t, conn, conn)
}

// TestIdleConnectionIsClosed: a keep-alive connection that sends no next request is closed
// after the idle timeout (the read timeout is long, so only the idle one can close it).
func TestIdleConnectionIsClosed(t *testing.T) {
	addr := startHTTP(t, timeouts(time.Minute, time.Minute, 200*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	conn := dial(t, addr)
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: warren.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(guard))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "ok" || resp.Close {
		t.Fatalf("got %d %q close=%v, want a kept-alive 200 ok", resp.StatusCode, body, resp.Close)
	}
	closedByServer(t, br, conn)
}

var iso8601 = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d{4})$`)

// serveInBackground runs the command until the test ends and waits for it to listen. It
// returns the listening address and the command's stderr.
func serveInBackground(t *testing.T, args []string, env map[string]string) (addr string, stderr *apiservertest.LockedBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stderr = &apiservertest.LockedBuffer{}
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, args, envOf(env), io.Discard, stderr) }()
	stop = func() int {
		cancel()
		select {
		case code := <-exit:
			return code
		case <-time.After(guard):
			t.Fatal("the server did not stop")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		for _, line := range logLines(t, stderr.String()) {
			if line["msg"] == "listening" {
				return line["address"].(string), stderr, stop
			}
		}
		select {
		case code := <-exit:
			t.Fatalf("the server exited with %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("the server did not listen: %s", stderr.String())
	return
}

// logLines decodes the JSON log lines of the output (the bootstrap banner is not one).
func logLines(t *testing.T, out string) []map[string]any {
	var lines []map[string]any
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestServeAndRestart starts the command on a new database, uses the printed bootstrap key,
// stops it, and starts it again with another bootstrap key, which is ignored with a warning.
func TestServeAndRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "w.db")
	args := []string{"--listen", "127.0.0.1:0", "--log-level", "debug"}
	env := map[string]string{"WARREN_DATABASE": dbPath}

	addr, stderr, stop := serveInBackground(t, args, env)
	banner := regexp.MustCompile(`Bootstrap admin API key token \(shown once, keep it\):\n\n  (\S+)\n`).FindStringSubmatch(stderr.String())
	if banner == nil {
		t.Fatalf("no bootstrap token printed: %s", stderr.String())
	}
	token := banner[1]
	if status := getAPIKeys(t, addr, token); status != 200 {
		t.Fatalf("GET /api_keys with the bootstrap token: %d", status)
	}
	if status := consoleStatus(t, addr); status != 200 {
		t.Fatalf("GET /console/ (on by default): %d", status)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := logLines(t, stderr.String())
	seen := map[string]bool{}
	for _, l := range lines {
		ts, _ := l["ts"].(string)
		if !iso8601.MatchString(ts) {
			t.Fatalf("log line %v: ts %q is not ISO 8601", l, l["ts"])
		}
		seen[l["msg"].(string)] = true
	}
	for _, msg := range []string{"listening", "request started", "store read", "store write", "request", "shutting down"} {
		if !seen[msg] {
			t.Errorf("no %q line at debug level: %s", msg, stderr.String())
		}
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "{") && strings.Contains(l, token) {
			t.Fatalf("a log line carries the token: %s", l)
		}
	}

	other := ids.NewToken(ids.New(ids.APIKey))
	env["WARREN_BOOTSTRAP_API_KEY"] = other
	addr, stderr, stop = serveInBackground(t, []string{"--listen", "127.0.0.1:0", "--console=false"}, env)
	if status := consoleStatus(t, addr); status != 404 {
		t.Fatalf("GET /console/ with --console=false: %d, want 404", status)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stderr.String()
	if strings.Contains(out, other) || strings.Contains(out, "Bootstrap admin API key token") {
		t.Fatalf("the restart printed a token: %s", out)
	}
	warned := false
	for _, l := range logLines(t, out) {
		warned = warned || (l["level"] == "warn" && strings.Contains(l["msg"].(string), "bootstrap API key is ignored"))
		if l["level"] == "debug" {
			t.Fatalf("debug line at the default level: %v", l)
		}
	}
	if !warned {
		t.Fatalf("no warning that the bootstrap key is ignored: %s", out)
	}
}

// consoleStatus is the status of GET /console/.
func consoleStatus(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSecondServerRefused: a second server on the SQLite database of a running one exits 2
// naming the file, and leaves the first serving; the files are the owner's only.
func TestSecondServerRefused(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "w.db")
	env := map[string]string{"WARREN_DATABASE": dbPath}
	_, first, stop := serveInBackground(t, []string{"--listen", "127.0.0.1:0"}, env)

	// Bounded: a second server that did start would serve until the context ends.
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	defer cancel()
	var second apiservertest.LockedBuffer
	code := run(ctx, []string{"--listen", "127.0.0.1:0"}, envOf(env), io.Discard, &second)
	stderr := second.String()
	want := "another warren-apiserver is serving the database " + dbPath + " (it holds " + dbPath + ".lock)"
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("second start: exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
	}
	for _, f := range append(sqlite.Files(dbPath), dbPath+".key", dbPath+".lock") {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", filepath.Base(f), fi, err)
		}
	}
	if code := stop(); code != 0 {
		t.Fatalf("the first server: exit %d: %s", code, first.String())
	}
	// Stopped, it no longer holds the database.
	_, _, stop = serveInBackground(t, []string{"--listen", "127.0.0.1:0"}, env)
	if code := stop(); code != 0 {
		t.Fatalf("a start after the first stopped: exit %d", code)
	}
}
