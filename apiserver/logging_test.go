package apiserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// observed starts a test server whose logs at level and above are recorded.
func observed(t *testing.T, level zapcore.Level, configure ...func(*apiserver.Options)) (*tc, *observer.ObservedLogs) {
	core, logs := observer.New(level)
	c := newTC(t, append([]func(*apiserver.Options){func(o *apiserver.Options) { o.Logger = zap.New(core) }}, configure...)...)
	return c, logs
}

// accessLines returns the access log lines, in order.
func accessLines(logs *observer.ObservedLogs) []observer.LoggedEntry {
	return logs.FilterMessage("request").AllUntimed()
}

// noSecrets fails when a log line carries one of the strings.
func noSecrets(t *testing.T, logs *observer.ObservedLogs, secrets ...string) {
	t.Helper()
	for _, e := range logs.AllUntimed() {
		line, _ := json.Marshal(e.ContextMap())
		for _, s := range secrets {
			if strings.Contains(e.Message+string(line), s) {
				t.Fatalf("log line %q %s carries %q", e.Message, line, s)
			}
		}
	}
}

func TestAccessLogLevelsAndErrorCodes(t *testing.T) {
	c, logs := observed(t, zapcore.InfoLevel, func(o *apiserver.Options) { o.RateLimit = 2 })
	c.ok(200, "GET", "/api_keys", nil)
	c.fails(400, "ERR_218", "GET", "/api_keys", nil, "Service-Version", "") // before the rate limit
	c.ok(200, "GET", "/api_keys", nil)
	c.fails(429, "ERR_226", "GET", "/api_keys", nil)

	lines := accessLines(logs)
	if len(lines) != 4 {
		t.Fatalf("%d access lines, want 4: %v", len(lines), lines)
	}
	for i, want := range []struct {
		level  zapcore.Level
		status int64
		code   any
	}{
		{zapcore.InfoLevel, 200, nil},
		{zapcore.InfoLevel, 400, "ERR_218"},
		{zapcore.InfoLevel, 200, nil},
		{zapcore.WarnLevel, 429, "ERR_226"},
	} {
		fields := lines[i].ContextMap()
		if lines[i].Level != want.level || fields["status"] != want.status || fields["error_code"] != want.code {
			t.Errorf("access line %d: level %s, fields %v; want level %s, status %d, error_code %v", i, lines[i].Level, fields, want.level, want.status, want.code)
		}
	}
	if n := logs.FilterLevelExact(zapcore.DebugLevel).Len(); n != 0 {
		t.Fatalf("%d debug lines at info level", n)
	}
	noSecrets(t, logs, c.token)
}

// TestDebugLogsRequestsAndStoreTimings: at debug level every request also logs its start
// and one line per store transaction with its duration, under the request's operation id,
// still without the body or the token.
func TestDebugLogsRequestsAndStoreTimings(t *testing.T) {
	c, logs := observed(t, zapcore.DebugLevel)
	const marker = "body-marker-7f3a"
	created := c.ok(201, "POST", "/api_keys", map[string]any{"description": marker})
	lines := accessLines(logs)
	if len(lines) != 1 {
		t.Fatalf("%d access lines, want 1", len(lines))
	}
	opID := lines[0].ContextMap()["operation_id"]
	mine := logs.FilterField(zap.Any("operation_id", opID))
	started := mine.FilterMessage("request started").AllUntimed()
	if len(started) != 1 || started[0].Level != zapcore.DebugLevel || started[0].ContextMap()["method"] != "POST" || started[0].ContextMap()["path"] != "/api_keys" {
		t.Fatalf("request started lines: %v", started)
	}
	reads, writes := mine.FilterMessage("store read").AllUntimed(), mine.FilterMessage("store write").AllUntimed()
	if len(reads) == 0 || len(writes) != 1 { // authentication reads, the create writes
		t.Fatalf("%d store read and %d store write lines for the request, want ≥1 and 1", len(reads), len(writes))
	}
	for _, e := range append(reads, writes...) {
		f := e.ContextMap()
		if _, timed := f["duration"]; !timed || e.Level != zapcore.DebugLevel || f["attempts"] != int64(1) {
			t.Fatalf("store line %s %v: want a debug line with duration and attempts 1", e.Message, f)
		}
	}
	noSecrets(t, logs, c.token, marker, str(created["token"]))
}

// TestBootstrapKeyIgnoredWarns: restarting on a bootstrapped store with another bootstrap
// key warns (without the key); the same key or none does not.
func TestBootstrapKeyIgnoredWarns(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	first := ids.NewToken(ids.New(ids.APIKey))
	start := func(token string) *observer.ObservedLogs {
		t.Helper()
		core, logs := observer.New(zapcore.InfoLevel)
		srv, err := apiserver.New(ctx, apiserver.Options{Store: db, BaseURL: "http://warren.test", BootstrapAPIKey: token, Logger: zap.New(core)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return logs
	}
	for _, token := range []string{first, first, ""} {
		if logs := start(token); logs.Len() != 0 {
			t.Fatalf("bootstrap key %q: unexpected logs %v", token, logs.AllUntimed())
		}
	}
	// Same key ID, another secret: not the stored key either.
	body, _, _ := ids.SplitToken(first)
	for _, other := range []string{ids.NewToken(ids.New(ids.APIKey)), ids.NewToken(ids.APIKey + body)} {
		logs := start(other)
		warns := logs.FilterLevelExact(zapcore.WarnLevel).AllUntimed()
		if len(warns) != 1 || !strings.Contains(warns[0].Message, "bootstrap API key is ignored") || !strings.Contains(str(warns[0].ContextMap()["hint"]), "POST /api_keys") {
			t.Fatalf("logs %v, want one warning that the key is ignored and how to create one", logs.AllUntimed())
		}
		noSecrets(t, logs, other)
	}
}

// TestHealthChecksLoggedAtDebug: a load balancer's health checks do not fill the log at
// info; a failing one is still logged at warn.
func TestHealthChecksLoggedAtDebug(t *testing.T) {
	c, logs := observed(t, zapcore.DebugLevel)
	noAuth := []string{"Authorization", "", "Service-Version", ""}
	equal(t, "healthz", c.req("GET", "/healthz", nil, noAuth...).status, 200)
	equal(t, "readyz", c.req("GET", "/readyz", nil, noAuth...).status, 200)
	c.ok(200, "GET", "/api_keys", nil)
	if err := c.srv.Store.Close(); err != nil {
		t.Fatal(err)
	}
	equal(t, "readyz, store closed", c.req("GET", "/readyz", nil, noAuth...).status, 503)

	var got []string
	for _, e := range accessLines(logs) {
		got = append(got, e.Level.String()+" "+e.ContextMap()["path"].(string))
	}
	equal(t, "access lines", got, []string{"debug /healthz", "debug /readyz", "info /api_keys", "warn /readyz"})
}
