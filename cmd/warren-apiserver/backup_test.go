package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBackupAndRestoreCommands: 'backup' copies the database of a running server while API
// clients write; 'restore' is refused while the server runs and, once it stopped, brings the
// copy back: the restarted server answers every write acknowledged before the backup began.
func TestBackupAndRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"WARREN_DATABASE": filepath.Join(dir, "w.db")}
	addr, stderr, stop := serveInBackground(t, []string{"--listen", "127.0.0.1:0", "--rate-limit", "0", "--max-concurrent-requests", "0"}, env)
	token := regexp.MustCompile(`Bootstrap admin API key token \(shown once, keep it\):\n\n  (\S+)\n`).FindStringSubmatch(stderr.String())[1]

	var (
		mu    sync.Mutex
		acked []string
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				status, body, _ := apiCall("http://"+addr, token, "POST", "/ip_policies", json.RawMessage(fmt.Sprintf(`{"description":"w%d-%d"}`, w, i)))
				if status != 201 {
					t.Errorf("POST /ip_policies: %d %v", status, body)
					return
				}
				mu.Lock()
				acked = append(acked, body["id"].(string))
				mu.Unlock()
			}
		})
	}
	for n := 0; n < 100; time.Sleep(time.Millisecond) {
		mu.Lock()
		n = len(acked)
		mu.Unlock()
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	backup := filepath.Join(dir, "backup.db")
	if code, out, errOut := runOnce(t, []string{"backup", backup}, env); code != 0 || !strings.Contains(out, "backed up") {
		t.Fatalf("backup: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := runOnce(t, []string{"restore", backup}, env); code != exitUsage || !strings.Contains(errOut, "another warren-apiserver is serving") {
		t.Fatalf("restore while the server runs: exit %d: %s", code, errOut)
	}
	close(done)
	wg.Wait()
	mu.Lock()
	after := len(acked)
	mu.Unlock()
	if code := stop(); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}

	if code, out, errOut := runOnce(t, []string{"restore", "--database", env["WARREN_DATABASE"], backup}, nil); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, out, errOut)
	}
	addr, _, stop = serveInBackground(t, []string{"--listen", "127.0.0.1:0"}, env)
	defer stop()
	for _, id := range before {
		if status, body, _ := apiCall("http://"+addr, token, "GET", "/ip_policies/"+id, nil); status != 200 {
			t.Fatalf("GET %s, acknowledged before the backup, after the restore: %d %v", id, status, body)
		}
	}
	t.Logf("%d writes acknowledged before the backup, %d in all", len(before), after)
}

func TestBackupUsage(t *testing.T) {
	if code, _, errOut := runOnce(t, []string{"backup"}, nil); code != exitUsage || !strings.Contains(errOut, "needs the backup's file") {
		t.Errorf("backup without a file: exit %d: %s", code, errOut)
	}
	env := map[string]string{"WARREN_DATABASE": "postgres://u@localhost/warren", "WARREN_SECRET_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}
	if code, _, errOut := runOnce(t, []string{"backup", filepath.Join(t.TempDir(), "b.db")}, env); code != exitUsage || !strings.Contains(errOut, "pg_dump") {
		t.Errorf("backup of PostgreSQL: exit %d: %s", code, errOut)
	}
}
