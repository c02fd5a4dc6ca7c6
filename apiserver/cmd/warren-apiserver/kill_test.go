package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

const killHelperEnv = "WARREN_TEST_KILLED_SERVER"

// TestEventSurvivesKill9 makes a change through a server process whose event target is down,
// kills the process with SIGKILL, and starts the server again on the same database with the
// target up: the change's event is delivered.
func TestEventSurvivesKill9(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey("AKIAKILLTEST", "kill-secret")
	fake.Kinesis.SetDown(true)
	token := ids.NewToken(ids.New(ids.APIKey))
	env := map[string]string{
		"WARREN_DATABASE":                   filepath.Join(t.TempDir(), "w.db"),
		"WARREN_LISTEN":                     "127.0.0.1:0",
		"WARREN_BOOTSTRAP_API_KEY":          token,
		"WARREN_EVENT_ENDPOINT_DATA_STREAM": fake.URL,
		"WARREN_EVENT_MAX_BACKOFF":          "50ms",
		"WARREN_EVENT_LEASE":                "2s",
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledServerHelper$", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), killHelperEnv+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		for lines := bufio.NewScanner(stderr); lines.Scan(); {
			var line map[string]any
			if json.Unmarshal(lines.Bytes(), &line) == nil && line["msg"] == "listening" {
				addr <- line["address"].(string)
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(guard):
		t.Fatal("the server process did not listen")
	}
	call := func(base, method, path string, body any) map[string]any {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 201 {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	dest := call(base, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{
		"auth":       map[string]any{"creds": map[string]any{"access_key_id": "AKIAKILLTEST", "secret_access_key": "kill-secret"}},
		"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}})
	call(base, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{dest["id"]}})
	policy := call(base, "POST", "/ip_policies", map[string]any{"description": "before the crash"})

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the server process did not die by SIGKILL: %v", err)
	}
	if got := fake.Kinesis.Payloads(); len(got) != 0 {
		t.Fatalf("delivered before the crash: %s", got)
	}

	fake.Kinesis.SetDown(false)
	serveInBackground(t, nil, env)
	var ev map[string]any
	if err := json.Unmarshal(fake.Kinesis.WaitFor(t, 1)[0], &ev); err != nil {
		t.Fatal(err)
	}
	if ev["event_type"] != "ip_policy_created.v0" || ev["object"].(map[string]any)["id"] != policy["id"] {
		t.Fatalf("delivered after the restart: %v", ev)
	}
}

// TestKilledServerHelper is the server process of TestEventSurvivesKill9.
func TestKilledServerHelper(t *testing.T) {
	if os.Getenv(killHelperEnv) == "" {
		t.Skip("run by TestEventSurvivesKill9")
	}
	os.Exit(run(context.Background(), nil, os.LookupEnv, os.Stdout, os.Stderr))
}
