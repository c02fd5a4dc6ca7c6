package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// testKey is a valid --secret-key for command lines that must fail for another reason.
var testKey = sealing.EncodeKey(bytes.Repeat([]byte{7}, sealing.KeySize))

func TestSecretKeyCommand(t *testing.T) {
	var stdout, stderr apiservertest.LockedBuffer
	if code := run(t.Context(), []string{"secret-key"}, envOf(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := sealing.ParseKey(stdout.String()); err != nil {
		t.Fatalf("secret-key printed %q: %v", stdout.String(), err)
	}
}

// getAPIKeys lists the API keys with token: authenticating reads the key's sealed hash.
func getAPIKeys(t *testing.T, addr, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/api_keys", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// runOnce runs a command that exits by itself (rotate-secrets, or a start that fails).
func runOnce(t *testing.T, args []string, env map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut apiservertest.LockedBuffer
	code = run(t.Context(), args, envOf(env), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestSecretKeyLifecycle follows a SQLite database from before sealing: the first start
// generates the key file and says so, the plaintext rows still work, rotate-secrets seals
// them, a wrong key is refused at start, and a rotation to a configured key works with the
// old key as a previous one and then without it.
func TestSecretKeyLifecycle(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "w.db")
	token := ids.NewToken(ids.New(ids.APIKey))

	// A database bootstrapped by a server without sealing: the key's hash is plaintext.
	db, err := sqlite.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(context.Background(), apiserver.Options{Store: db, BaseURL: "http://x", BootstrapAPIKey: token})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	db.Close()

	env := map[string]string{"WARREN_DATABASE": dbPath}
	args := []string{"--listen", "127.0.0.1:0"}
	addr, stderr, stop := serveInBackground(t, args, env)
	if code := getAPIKeys(t, addr, token); code != 200 {
		t.Fatalf("a plaintext row from before: GET /api_keys = %d", code)
	}
	stop()
	keyFile := dbPath + ".key"
	warned := false
	for _, l := range logLines(t, stderr.String()) {
		warned = warned || (l["level"] == "warn" && l["key_file"] == keyFile && strings.Contains(l["msg"].(string), "back it up"))
	}
	if !warned {
		t.Fatalf("no warning naming the generated key file: %s", stderr.String())
	}
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	b, _ := os.ReadFile(keyFile)
	if strings.Contains(stderr.String(), strings.TrimSpace(string(b))) {
		t.Fatal("the generated key reached the log")
	}

	// Sealing the rows from before; a second start reads the key file without a warning.
	if code, out, errOut := runOnce(t, []string{"rotate-secrets"}, env); code != 0 || !strings.Contains(out, "sealed 1 secrets again") {
		t.Fatalf("rotate-secrets: exit %d, %q, %s", code, out, errOut)
	}
	addr, stderr, stop = serveInBackground(t, args, env)
	if code := getAPIKeys(t, addr, token); code != 200 {
		t.Fatalf("after sealing: GET /api_keys = %d", code)
	}
	stop()
	if strings.Contains(stderr.String(), "generated") {
		t.Fatalf("a second start generated a key: %s", stderr.String())
	}

	// A wrong key: start refused, nothing changed.
	other := sealing.EncodeKey(sealing.GenerateKey())
	code, _, errOut := runOnce(t, append(args, "--secret-key", other), env)
	if code != 1 || !strings.Contains(errOut, "does not open this database's secrets") || strings.Contains(errOut, other) {
		t.Fatalf("wrong key: exit %d, %s", code, errOut)
	}

	// Rotation to a configured key: the old one as a previous key, rotate, then alone.
	rotating := map[string]string{"WARREN_DATABASE": dbPath, "WARREN_SECRET_KEY": other, "WARREN_PREVIOUS_SECRET_KEYS_FILE": keyFile}
	addr, _, stop = serveInBackground(t, args, rotating)
	if code := getAPIKeys(t, addr, token); code != 200 {
		t.Fatalf("with the old key as a previous one: GET /api_keys = %d", code)
	}
	stop()
	if code, out, errOut := runOnce(t, []string{"rotate-secrets"}, rotating); code != 0 || !strings.Contains(out, "sealed 1 secrets again") {
		t.Fatalf("rotate-secrets: exit %d, %q, %s", code, out, errOut)
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	keyOnly := filepath.Join(dir, "current.key")
	if err := os.WriteFile(keyOnly, []byte(other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, stderr, stop = serveInBackground(t, append(args, "--secret-key-file", keyOnly), env)
	if code := getAPIKeys(t, addr, token); code != 200 {
		t.Fatalf("with the new key alone: GET /api_keys = %d", code)
	}
	stop()
	if _, err := os.Stat(keyFile); err == nil || strings.Contains(stderr.String(), other) {
		t.Fatalf("a configured key generated a key file, or reached the log: %s", stderr.String())
	}
}

// TestMissingKeyFileRefused: a sealed database whose key file is gone does not start with a
// freshly generated key, says what to restore, and leaves no new key file behind.
func TestMissingKeyFileRefused(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "w.db")
	env := map[string]string{"WARREN_DATABASE": dbPath}
	_, _, stop := serveInBackground(t, []string{"--listen", "127.0.0.1:0"}, env)
	stop()
	if err := os.Remove(dbPath + ".key"); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runOnce(t, []string{"--listen", "127.0.0.1:0"}, env)
	if code != 1 || !strings.Contains(errOut, "no key file "+dbPath+".key was found: restore it") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(dbPath + ".key"); err == nil {
		t.Fatal("a failed start left a generated key file")
	}
}
