package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

var scaleSection = section{
	name:  "scale",
	title: "Server memory and start-up on a large database",
	run:   runScale,
}

// bareServer is the floor of memory: a net/http server that answers every request with a
// fixed JSON body, built as its own binary.
const bareServer = `package main

import (
	"net/http"
	"os"
)

func main() {
	body := []byte(` + "`" + `{"ip_policies":[],"uri":"/ip_policies","next_page_uri":null}` + "`" + `)
	http.ListenAndServe(os.Args[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}
`

// process is what one server process measured.
type process struct {
	startup    time.Duration // from exec to the first 200 of its readiness URL
	rss, peak  int64         // VmRSS and VmHWM after the requests
	reqs, objs int
}

func runScale(ctx context.Context, e *env) (*result, error) {
	n := size(e, 100_000, 1_000)
	bin := filepath.Join(e.dir, "warren-apiserver")
	e.logf("scale: building the server")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"github.com/warrenhq/terraform-provider-warren/cmd/warren-apiserver").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v: %s", err, out)
	}
	bare, err := e.buildProgram(ctx, "bare", bareServer)
	if err != nil {
		return nil, err
	}

	token := ids.NewToken(ids.New(ids.APIKey))
	emptyDB, seededDB := filepath.Join(e.dir, "scale-empty.db"), filepath.Join(e.dir, "scale-seeded.db")
	e.logf("scale: seeding %d objects", n)
	if err := seedFile(ctx, e, seededDB, token, n); err != nil {
		return nil, err
	}
	reqs := size(e, 50, 10)
	warrenArgs := func(db string) []string {
		return []string{"--database", db, "--bootstrap-api-key", token, "--rate-limit", "0", "--log-level", "warn"}
	}
	empty, err := measureProcess(ctx, bin, warrenArgs(emptyDB), "/readyz", "/ip_policies", token, reqs)
	if err != nil {
		return nil, fmt.Errorf("empty database: %w", err)
	}
	seeded, err := measureProcess(ctx, bin, warrenArgs(seededDB), "/readyz", "/ip_policies", token, reqs)
	if err != nil {
		return nil, fmt.Errorf("%d objects: %w", n, err)
	}
	floor, err := measureProcess(ctx, bare, nil, "/", "/ip_policies", "", reqs)
	if err != nil {
		return nil, fmt.Errorf("bare server: %w", err)
	}
	row := func(name string, p process) []string {
		return []string{name, secs(p.startup), mib(p.rss), mib(p.peak), ratio(float64(p.rss), float64(floor.rss))}
	}
	return &result{
		Intro: fmt.Sprintf("The warren-apiserver binary started on a SQLite database holding %d IP policies in one account, "+
			"against the same binary on an empty database and a bare net/http server (the floor of memory). "+
			"Start-up is the time from exec until GET /readyz answers 200; memory is read from /proc after %d list pages.", n, reqs),
		Tables: []table{{
			Header: []string{"Server", "Start-up", "RSS", "Peak RSS", "RSS / bare"},
			Rows: [][]string{
				row("bare net/http", floor),
				row("Warren, empty database", empty),
				row(fmt.Sprintf("Warren, %d objects", n), seeded),
			},
		}},
		Findings: []string{
			fmt.Sprintf("%d objects against an empty database: start-up %s, RSS %s.", n,
				ratio(float64(seeded.startup), float64(empty.startup)), ratio(float64(seeded.rss), float64(empty.rss))),
			"Nothing is loaded at start-up beyond the migrations' check, and a list page reads its page from the database: memory does not follow the database's size.",
		},
	}, nil
}

// seedFile makes a SQLite database at path whose bootstrapped account holds n IP policies.
func seedFile(ctx context.Context, e *env, path, token string, n int) error {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	w, err := e.startWarren(ctx, db, noRateLimit, func(o *apiserver.Options) { o.BootstrapAPIKey = token })
	if err != nil {
		db.Close()
		return err
	}
	defer w.Close()
	w.Token = token
	s, err := newSeeder(ctx, w)
	if err != nil {
		return err
	}
	return s.growTo(ctx, n)
}

// measureProcess starts a server binary with args and a free --listen address (the bare
// server takes the address as its argument), waits until ready answers 200, sends reqs GETs
// of page, reads its memory and stops it.
func measureProcess(ctx context.Context, bin string, args []string, ready, page, token string, reqs int) (process, error) {
	addr, err := freeAddr()
	if err != nil {
		return process{}, err
	}
	if args == nil {
		args = []string{addr}
	} else {
		args = append(args, "--listen", addr)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return process{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	client := newHTTPClient(1)
	var p process
	for {
		resp, err := client.Get("http://" + addr + ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				p.startup = time.Since(start)
				break
			}
		}
		if time.Since(start) > time.Minute {
			return p, fmt.Errorf("%s not ready after a minute: %v\n%s", bin, err, stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range reqs {
		if _, err := call(ctx, client, http.MethodGet, "http://"+addr+page, token, "", 200); err != nil {
			return p, err
		}
	}
	p.reqs = reqs
	p.rss, p.peak, err = memoryOf(cmd.Process.Pid)
	return p, err
}

// memoryOf reads VmRSS and VmHWM of a process.
func memoryOf(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS in /proc/<pid>/status")
	}
	return rss, peak, sc.Err()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
