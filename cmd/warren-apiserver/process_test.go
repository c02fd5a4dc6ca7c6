package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// serverProcess is the command run in a process of its own (TestKilledServerHelper), so
// that a test can kill it with SIGKILL.
type serverProcess struct {
	cmd    *exec.Cmd
	stderr *apiservertest.LockedBuffer
	addr   string        // the API's address
	exited chan struct{} // closed once the process is gone
}

// startProcess starts the command with env (and nothing of the test's own WARREN_*
// variables) and waits until its API listens; the process is killed when the test ends.
func startProcess(t *testing.T, env map[string]string) *serverProcess {
	t.Helper()
	p := &serverProcess{stderr: &apiservertest.LockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestKilledServerHelper$", "-test.timeout=5m")
	p.cmd.Env = append(os.Environ(), killHelperEnv+"=1")
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.exited })
	p.addr = waitForLog(t, p.stderr, "listening", 1)["address"].(string)
	return p
}

// kill9 kills the process with SIGKILL and waits until it is gone.
func (p *serverProcess) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(guard):
		t.Fatal("the killed server process did not exit")
	}
	if state := p.cmd.ProcessState.String(); !strings.Contains(state, "killed") {
		t.Fatalf("the server process did not die by SIGKILL: %s: %s", state, p.stderr.String())
	}
}

// apiCall sends a request to the API at base with the bearer token and decodes the JSON
// answer; err is a failure to reach the API or to read its whole answer.
func apiCall(base, token, method, path string, body any) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, base+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err // a body cut off by a kill
	}
	var out map[string]any
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			return 0, nil, err
		}
	}
	return resp.StatusCode, out, nil
}
