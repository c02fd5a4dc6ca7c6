package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

const killHelperEnv = "WARREN_TEST_KILLED_SERVER"

// databases are the databases a command test runs on: each returns the environment that
// points the command at a new empty database of its kind.
var databases = []struct {
	name string
	env  func(t *testing.T) map[string]string
}{
	{"sqlite", func(t *testing.T) map[string]string {
		return map[string]string{"WARREN_DATABASE": filepath.Join(t.TempDir(), "w.db")}
	}},
	{"postgres", func(t *testing.T) map[string]string {
		return map[string]string{"WARREN_DATABASE": pgcluster.DatabaseURL(t), "WARREN_SECRET_KEY": testKey}
	}},
}

// TestEventSurvivesKill9 makes a change through a server process whose event target is down,
// then creates objects from several clients at once, kills the process with SIGKILL in the
// middle of that load, and starts the server again on the same database with the target up:
// the change's event is delivered, and every create the process acknowledged is there.
func TestEventSurvivesKill9(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) { testEventSurvivesKill9(t, db.env(t)) })
	}
}

func testEventSurvivesKill9(t *testing.T, env map[string]string) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey("AKIAKILLTEST", "kill-secret")
	fake.Kinesis.SetDown(true)
	token := ids.NewToken(ids.New(ids.APIKey))
	maps.Copy(env, map[string]string{
		"WARREN_LISTEN":                     "127.0.0.1:0",
		"WARREN_BOOTSTRAP_API_KEY":          token,
		"WARREN_EVENT_ENDPOINT_DATA_STREAM": fake.URL,
		"WARREN_EVENT_MAX_BACKOFF":          "50ms",
		"WARREN_EVENT_LEASE":                "2s",
		"WARREN_RATE_LIMIT":                 "0",
	})
	proc := startProcess(t, env)
	base := "http://" + proc.addr
	send := func(base, method, path string, body any) (int, map[string]any, error) {
		return apiCall(base, token, method, path, body)
	}
	call := func(base, method, path string, body any) map[string]any {
		t.Helper()
		status, out, err := send(base, method, path, body)
		if err != nil || status != 201 {
			t.Fatalf("%s %s: %d %v %v", method, path, status, out, err)
		}
		return out
	}
	dest := call(base, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{
		"auth":       map[string]any{"creds": map[string]any{"access_key_id": "AKIAKILLTEST", "secret_access_key": "kill-secret"}},
		"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}})
	call(base, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{dest["id"]}})
	policy := call(base, "POST", "/ip_policies", map[string]any{"description": "before the crash"})

	// Load: clients create until the process dies; the kill comes once enough were acknowledged.
	var mu sync.Mutex
	var acked []string
	enough := make(chan struct{})
	var once sync.Once
	var clients sync.WaitGroup
	for range 4 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for i := 0; i < 10_000; i++ { // bounded in case the kill never comes
				status, out, err := send(base, "POST", "/ip_policies", map[string]any{"description": "under load"})
				if err != nil {
					return // the process is gone
				}
				if status != 201 {
					t.Errorf("create under load: %d %v", status, out)
					return
				}
				mu.Lock()
				acked = append(acked, out["id"].(string))
				if len(acked) == 40 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(guard):
		t.Fatal("the clients did not get 40 creates acknowledged")
	}
	proc.kill9(t)
	clients.Wait()
	if got := fake.Kinesis.Payloads(); len(got) != 0 {
		t.Fatalf("delivered before the crash: %s", got)
	}

	fake.Kinesis.SetDown(false)
	addr2, _, _ := serveInBackground(t, nil, env)
	for _, id := range acked {
		if status, out, err := send("http://"+addr2, "GET", "/ip_policies/"+id, nil); err != nil || status != 200 {
			t.Fatalf("acknowledged %s lost in the crash: %d %v %v", id, status, out, err)
		}
	}
	t.Logf("%d creates acknowledged under load survived", len(acked))
	var ev map[string]any
	if err := json.Unmarshal(fake.Kinesis.WaitFor(t, 1)[0], &ev); err != nil {
		t.Fatal(err)
	}
	if ev["event_type"] != "ip_policy_created.v0" || ev["object"].(map[string]any)["id"] != policy["id"] {
		t.Fatalf("delivered after the restart: %v", ev)
	}
}

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// TestKilledServerHelper is the server process of TestEventSurvivesKill9.
func TestKilledServerHelper(t *testing.T) {
	if os.Getenv(killHelperEnv) == "" {
		t.Skip("run by TestEventSurvivesKill9")
	}
	os.Exit(run(context.Background(), nil, os.LookupEnv, os.Stdout, os.Stderr))
}
