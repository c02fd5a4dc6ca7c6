package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

func TestParsePortRange(t *testing.T) {
	for _, tt := range []struct {
		in       string
		min, max int
		ok       bool
	}{
		{"10000-60000", 10000, 60000, true},
		{" 20000 - 20010 ", 20000, 20010, true},
		{"443", 443, 443, true},
		{"", 0, 0, false},
		{"a-b", 0, 0, false},
		{"1-", 0, 0, false},
	} {
		lo, hi, err := parsePortRange(tt.in)
		if (err == nil) != tt.ok || lo != tt.min || hi != tt.max {
			t.Errorf("parsePortRange(%q) = %d, %d, %v", tt.in, lo, hi, err)
		}
	}
}

// envOf turns a map into the environment run reads.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// emptyDir fails when the command left anything in dir.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("the command left %v behind", entries)
	}
}

// TestCommandLine runs the command in-process on command lines that must not start a server:
// each gets its exit code and output, and none creates a database, neither where --database
// points nor in the working directory.
func TestCommandLine(t *testing.T) {
	const usageStart = "warren-apiserver serves the Tunnel and Edge Management API."
	for _, tt := range []struct {
		args           []string
		env            map[string]string
		code           int
		stdout, stderr string // substrings; "" checks the stream is empty
	}{
		{args: []string{"bogus"}, code: 2, stderr: `unknown command "bogus"`},
		{args: []string{"--listen", "127.0.0.1:0", "bogus"}, code: 2, stderr: `unexpected argument "bogus"`},
		{args: []string{"version", "x"}, code: 2, stderr: "version takes no arguments"},
		{args: []string{"--nope"}, code: 2, stderr: "flag provided but not defined: -nope"},
		{args: []string{"version"}, stdout: "dev\n"},
		{args: []string{"--version"}, stdout: "dev\n"},
		{args: []string{"-version"}, stdout: "dev\n"},
		{args: []string{"--version"}, env: map[string]string{"WARREN_RATE_LIMIT": "abc"}, stdout: "dev\n"},
		{args: []string{"help"}, stdout: usageStart},
		{args: []string{"--help"}, stdout: usageStart},
		{args: []string{"-h"}, stdout: usageStart},
		{args: []string{"--rate-limit", "x"}, code: 2, stderr: `invalid value "x" for flag -rate-limit`},
		{args: []string{"--rate-limit", "-1"}, code: 2, stderr: "--rate-limit -1 is negative"},
		{args: []string{"--max-concurrent-requests", "-1"}, code: 2, stderr: "--max-concurrent-requests -1 is negative"},
		{args: []string{"--agent-max-sessions", "-1"}, code: 2, stderr: "--agent-max-sessions -1 is negative"},
		{env: map[string]string{"WARREN_RATE_LIMIT": "abc"}, code: 2, stderr: `invalid value "abc" for WARREN_RATE_LIMIT`},
		{args: []string{"--log-level", "loud"}, code: 2, stderr: `--log-level "loud" is not one of`},
		{args: []string{"--read-timeout", "-1s"}, code: 2, stderr: "--read-timeout -1s is negative"},
		{args: []string{"--agent-replica-lease", "-1s"}, code: 2, stderr: "--agent-replica-lease -1s is negative"},
		{args: []string{"--agent-replica-lease", "5s"}, code: 2, stderr: "the agent replica lease 5s must be longer than the agent heartbeat 10s"},
		{args: []string{"--agent-advertise", "replica-1:8080"}, code: 2, stderr: `the agent address "replica-1:8080" is not an http:// or https:// base URL`},
		{args: []string{"--cluster-advertise", "10.0.0.1:7443"}, code: 2, stderr: "--cluster-advertise needs --cluster-listen"},
		{args: []string{"--cluster-listen", ":7443"}, code: 2, stderr: "--cluster-listen :7443 names no host the other replicas can reach: give --cluster-advertise"},
		{args: []string{"--cluster-listen", "0.0.0.0:7443"}, code: 2, stderr: "give --cluster-advertise"},
		{args: []string{"--cluster-listen", ":7443", "--cluster-advertise", "replica-1"}, code: 2, stderr: "--cluster-advertise replica-1 is not host:port"},
		{env: map[string]string{"WARREN_IDLE_TIMEOUT": "soon"}, code: 2, stderr: `invalid value "soon" for WARREN_IDLE_TIMEOUT`},
		{args: []string{"--listen", "8080"}, code: 2, stderr: `--listen "8080" is not a host:port address`},
		{args: []string{"--base-url", "warren.example.com"}, code: 2, stderr: `--base-url "warren.example.com" is not an http:// or https:// URL`},
		{args: []string{"--tcp-addr-ports", "a-b"}, code: 2, stderr: `--tcp-addr-ports "a-b" is not a port range`},
		{args: []string{"--tcp-addr-ports", "5-1"}, code: 2, stderr: "ports 5-1 are not a range within 1-65535"},
		{args: []string{"--trusted-proxies", "10.0.0.0/8,nonsense"}, code: 2, stderr: "--trusted-proxies: "},
		{args: []string{"--domain-base", "bad_domain"}, code: 2, stderr: `the domain base "bad_domain" is not a fully qualified domain name`},
		{args: []string{"--bootstrap-api-key", "short"}, code: 2, stderr: "the bootstrap API key must have the shape"},
		{args: []string{"--database", "postgres://u:hunter2@db:bad/x"}, code: 2, stderr: "--database is not a valid postgres:// URL"},
		{args: []string{"secret-key", "x"}, code: 2, stderr: "secret-key takes no arguments"},
		{args: []string{"--secret-key", "hunter2-not-base64!"}, code: 2, stderr: "--secret-key: the key is not base64"},
		{env: map[string]string{"WARREN_SECRET_KEY": "aHVudGVyMmh1bnRlcjI="}, code: 2, stderr: "--secret-key: the key is 14 bytes; it must be 32"},
		{args: []string{"--secret-key", testKey, "--secret-key-file", "k"}, code: 2, stderr: "--secret-key and --secret-key-file both set"},
		{args: []string{"--secret-key-file", "missing.key"}, code: 2, stderr: "--secret-key-file: open missing.key: no such file"},
		{args: []string{"--previous-secret-keys", testKey}, code: 2, stderr: "--previous-secret-keys need --secret-key or --secret-key-file"},
		{args: []string{"--secret-key", testKey, "--previous-secret-keys", testKey + ",hunter2"}, code: 2, stderr: "previous secret key 2: the key is"},
		{args: []string{"--database", "postgres://u:hunter2@db/x"}, code: 2, stderr: "a PostgreSQL --database needs --secret-key or --secret-key-file"},
		{args: []string{"rotate-secrets", "--secret-key", "hunter2"}, code: 2, stderr: "--secret-key: "},
		{args: []string{"rotate-secrets"}, code: 1, stderr: "rotate-secrets: no database to rotate"},
		{args: []string{"--edge-https-listen", "443"}, code: 2, stderr: `--edge-https-listen "443" is not a host:port address`},
		{env: map[string]string{"WARREN_EDGE_ALLOW_PRIVATE_BACKENDS": "10.0.0.0/8, nope"}, code: 2, stderr: `--edge-allow-private-backends: "nope" is not a CIDR`},
		{args: []string{"--edge-dial-timeout", "0s"}, code: 2, stderr: "--edge-dial-timeout 0s must be positive"},
		{args: []string{"--acme-directory", "letsencrypt"}, code: 2, stderr: `"letsencrypt" is not AUTHORITY=URL`},
		{args: []string{"--acme-directory", "letsencrypt=http://ca.test/dir"}, code: 2, stderr: `the directory of letsencrypt, "http://ca.test/dir", is not an absolute https URL`},
		{args: []string{"--acme-roots", "/nonexistent/roots.pem"}, code: 2, stderr: "--acme-roots: open /nonexistent/roots.pem"},
		{args: []string{"--edge-tcp-host", "127.0.0.1:80"}, code: 2, stderr: `--edge-tcp-host "127.0.0.1:80" is a host, without a port`},
	} {
		t.Run(strings.Join(tt.args, " ")+fmt.Sprint(tt.env), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			env := map[string]string{"WARREN_DATABASE": filepath.Join(dir, "w.db")}
			maps.Copy(env, tt.env)
			var stdout, stderr apiservertest.LockedBuffer
			code := run(t.Context(), tt.args, envOf(env), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			for _, s := range []struct{ name, got, want string }{{"stdout", stdout.String(), tt.stdout}, {"stderr", stderr.String(), tt.stderr}} {
				if (s.want == "") != (s.got == "") || !strings.Contains(s.got, s.want) {
					t.Errorf("%s = %q, want it to contain %q", s.name, s.got, s.want)
				}
			}
			if strings.Contains(stderr.String(), "hunter2") {
				t.Error("the database password reached the output")
			}
			// A wrong command line shows the usage after saying what is wrong.
			wrongLine := strings.Contains(tt.stderr, "argument") || strings.Contains(tt.stderr, "command") || strings.Contains(tt.stderr, "not defined")
			if wrongLine && !strings.Contains(stderr.String(), usageStart) {
				t.Errorf("stderr lacks the usage: %s", stderr.String())
			}
			emptyDir(t, dir)
		})
	}
}

func TestTokenCommand(t *testing.T) {
	var stdout, stderr apiservertest.LockedBuffer
	if code := run(t.Context(), []string{"token"}, envOf(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, _, ok := ids.SplitToken(strings.TrimSpace(stdout.String())); !ok {
		t.Fatalf("token %q has not the shape of an API key token", stdout.String())
	}
}

// TestFlagsWinOverEnvironment: the environment fills only the flags the command line leaves
// out, and --help shows built-in defaults, never a token from the environment.
func TestFlagsWinOverEnvironment(t *testing.T) {
	env := envOf(map[string]string{"WARREN_RATE_LIMIT": "abc", "WARREN_MAX_CONCURRENT_REQUESTS": "7", "WARREN_LISTEN": "127.0.0.1:9", "WARREN_READ_TIMEOUT": "3s", "WARREN_ADMIN_TOKEN": "admin-secret-1"})
	cfg, err := parseFlags([]string{"--rate-limit", "5"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.rateLimit != 5 || cfg.maxConcurrentRequests != 7 || cfg.listen != "127.0.0.1:9" || cfg.readTimeout != 3*time.Second || cfg.idleTimeout != 120*time.Second || cfg.adminToken != "admin-secret-1" {
		t.Fatalf("config %+v", cfg)
	}
	var stdout apiservertest.LockedBuffer
	run(t.Context(), []string{"--help"}, env, &stdout, io.Discard)
	if strings.Contains(stdout.String(), "admin-secret-1") {
		t.Fatal("--help printed the admin token from the environment")
	}
}

// TestAgentLimitFlags: the agent session limits come from flags or the environment, 0 turns
// one off, and the others keep their defaults.
func TestAgentLimitFlags(t *testing.T) {
	env := envOf(map[string]string{"WARREN_AGENT_ACCOUNT_MAX_SESSIONS": "9"})
	cfg, err := parseFlags([]string{"--agent-session-rate", "0", "--agent-max-sessions", "7"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := agentplane.Options{
		Heartbeat: agentplane.DefaultHeartbeat, CommandTimeout: agentplane.DefaultCommandTimeout,
		CredentialSessionRate: -1, AccountSessionRate: agentplane.DefaultAccountSessionRate, CredentialSessions: 7, AccountSessions: 9,
	}
	if got := cfg.options().Agents; got != want {
		t.Fatalf("agent options %+v, want %+v", got, want)
	}
}

// TestFailedStartLeavesNothing: a start that fails after the command line was accepted
// exits 1 with an error naming the cause, and creates no database (nor removes one that was
// there).
func TestFailedStartLeavesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	content := []byte(strings.Repeat("not a database ", 100))
	if err := os.WriteFile(garbage, content, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", busy.Addr().String(), "--database", filepath.Join(dir, "w.db")}, "address already in use"},
		{[]string{"--listen", "127.0.0.1:0", "--database", filepath.Join(dir, "missing", "w.db")}, "cannot create the database " + filepath.Join(dir, "missing", "w.db") + ": the directory " + filepath.Join(dir, "missing") + " does not exist"},
		{[]string{"--listen", "127.0.0.1:0", "--database", garbage}, garbage + ": migrate"},
	} {
		var stdout, stderr apiservertest.LockedBuffer
		code := run(t.Context(), tt.args, envOf(nil), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "garbage.db" {
		t.Fatalf("files left: %v", entries)
	}
	if got, _ := os.ReadFile(garbage); !bytes.Equal(got, content) {
		t.Fatal("the existing file was changed")
	}
}

// TestOpenStoreDiscard: discard removes the files of a database this start created, and
// leaves one that existed before.
func TestOpenStoreDiscard(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	db, _, discard, err := openStore(t.Context(), path, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Write(t.Context(), func(tx store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database was not created: %v", err)
	}
	db.Close()
	discard()
	emptyDir(t, dir)

	// Existing now: a second start's discard keeps it.
	db, _, _, err = openStore(t.Context(), path, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, _, discard, err = openStore(t.Context(), path, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	discard()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("discard removed a database that existed before: %v", err)
	}
}
