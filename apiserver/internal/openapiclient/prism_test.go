package openapiclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	oc "github.com/warrenhq/terraform-provider-warren/apiserver/internal/openapiclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// prismBin is Stoplight Prism, pinned in tools/openapi/package-lock.json and installed there by
// npm ci (scripts/openapi-lint.sh, run by make test before the Go tests).
const prismBin = "../../../tools/openapi/node_modules/.bin/prism"

// TestPrismValidatesLiveCalls sends TestGeneratedClient's calls through Stoplight Prism, a
// third-party validator, in proxy mode in front of the server: Prism checks each request and
// each of the server's answers against the committed document (testdata/openapi.json). A
// request or an answer the document does not describe fails here: with --errors Prism answers
// an invalid request 422 without forwarding it and an invalid answer 500, and it names every
// violation, warnings too, in the sl-violations header, which this test also fails on.
func TestPrismValidatesLiveCalls(t *testing.T) {
	needPrism(t, "live calls were not validated through Prism")
	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	prismURL := startPrism(t, "../../testdata/openapi.json", srv.URL)

	seen := &violations{next: http.DefaultTransport}
	through := oc.WithHTTPClient(&http.Client{Transport: seen, Timeout: 30 * time.Second})
	driveEveryFamily(t, prismURL, srv.APIKey, through)
	// What the driver does not send: a list, and calls the server refuses (their APIError).
	t.Run("a list and error answers", func(t *testing.T) {
		c := newClient(t, prismURL, srv.APIKey, through)
		ctx := context.Background()
		const v = oc.ServiceVersion(api.Version)
		got(c.PostBackendsStaticWithResponse(ctx, &oc.PostBackendsStaticParams{ServiceVersion: v}, oc.StaticBackendCreate{Address: "127.0.0.1:8080"})).want(t, "create", 201)
		got(c.GetBackendsStaticWithResponse(ctx, &oc.GetBackendsStaticParams{ServiceVersion: v, Limit: ptr(oc.Limit(1))})).want(t, "list", 200)
		got(c.GetApiKeysIdWithResponse(ctx, "ak_"+strings.Repeat("0", 27), &oc.GetApiKeysIdParams{ServiceVersion: v})).want(t, "get a missing key", 404)
		got(c.PostBackendsStaticWithResponse(ctx, &oc.PostBackendsStaticParams{ServiceVersion: v}, oc.StaticBackendCreate{Address: "no port"})).want(t, "create with a bad address", 400)
	})
	for _, v := range seen.list() {
		t.Error(v)
	}
}

// needPrism skips the test, saying what was not done, where Prism is not installed: like
// scripts/openapi-lint.sh, only a machine without Node.js goes without.
func needPrism(t *testing.T, notDone string) {
	t.Helper()
	if _, err := os.Stat(prismBin); err != nil {
		t.Skipf("Stoplight Prism is not installed (tools/openapi/node_modules/.bin/prism, by npm ci in tools/openapi, as scripts/openapi-lint.sh does; it needs Node.js), so %s", notDone)
	}
}

// violations is a transport that records every answer on which Prism reports a violation: in
// the sl-violations header, or as Prism's own problem answer (application/problem+json, which
// the server never sends), which is how it refuses an invalid request, without the header.
type violations struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (v *violations) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	report := resp.Header.Get("sl-violations")
	if resp.Header.Get("Content-Type") == "application/problem+json" {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		report += " " + string(body)
	}
	if report != "" {
		v.mu.Lock()
		v.seen = append(v.seen, fmt.Sprintf("%s %s: %d, Prism reports: %s", r.Method, r.URL.Path, resp.StatusCode, report))
		v.mu.Unlock()
	}
	return resp, nil
}

func (v *violations) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.seen...)
}

// startPrism runs `prism proxy --errors` for document in front of upstream, waits until it
// listens, and stops it when the test ends; it returns Prism's URL. Prism picks its own port
// (--port 0) and names it in its log: a port chosen here and handed over could be taken by
// another process during Prism's seconds of start-up.
func startPrism(t *testing.T, document, upstream string) string {
	t.Helper()
	var out apiservertest.LockedBuffer
	cmd := exec.Command(prismBin, "proxy", "--errors", "--host", "127.0.0.1", "--port", "0", document, upstream)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second // a child that keeps the output pipe open must not hang the cleanup
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prism's output:\n%s", out.String())
		}
	})

	listening := regexp.MustCompile(`Prism is listening on (http://127\.0\.0\.1:[0-9]+)`)
	started := time.Now()
	deadline := time.After(60 * time.Second)
	for {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			t.Logf("prism listens after %s", time.Since(started).Round(time.Millisecond))
			return m[1]
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("prism exited before listening (%v):\n%s", err, out.String())
		case <-deadline:
			t.Fatalf("prism did not say it listens within 60 s:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestPrismReportsViolations is TestPrismValidatesLiveCalls's control: through Prism with a
// document tampered on two points, a request and an answer that break it are each reported,
// so a clean run of the live calls means they conform, not that Prism looked at nothing.
func TestPrismReportsViolations(t *testing.T) {
	needPrism(t, "Prism's reports were not checked")
	data, err := os.ReadFile("../../testdata/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	property := func(schema, name string) map[string]any {
		return schemas[schema].(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
	}
	property("APIKeyCreate", "description")["type"] = "integer" // the client sends a string
	property("Credential", "created_at")["type"] = "integer"    // the server answers a string
	tampered := filepath.Join(t.TempDir(), "openapi.json")
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tampered, data, 0o600); err != nil {
		t.Fatal(err)
	}

	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	seen := &violations{next: http.DefaultTransport}
	c := newClient(t, startPrism(t, tampered, srv.URL), srv.APIKey, oc.WithHTTPClient(&http.Client{Transport: seen, Timeout: 30 * time.Second}))
	ctx := context.Background()
	const v = oc.ServiceVersion(api.Version)
	got(c.PostApiKeysWithResponse(ctx, &oc.PostApiKeysParams{ServiceVersion: v}, oc.APIKeyCreate{Description: ptr("k")})).want(t, "create api key, a request against the document", http.StatusUnprocessableEntity)
	got(c.PostCredentialsWithResponse(ctx, &oc.PostCredentialsParams{ServiceVersion: v}, oc.CredentialCreate{})).want(t, "create credential, an answer against the document", http.StatusInternalServerError)
	reports := seen.list()
	if len(reports) != 2 || !strings.Contains(reports[0], "Request body property description must be integer") || !strings.Contains(reports[1], "Response body property created_at must be integer") {
		t.Fatalf("Prism's reports %q, want the request's description and the answer's created_at", reports)
	}
}
