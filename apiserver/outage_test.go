package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// answer is what a request sent from another goroutine got.
type answer struct {
	status     int
	code       string
	retryAfter string
	err        error
}

// send is a request with the standard headers that reports instead of failing the test, so
// that goroutines may send it.
func (c *tc) send(method, path, body string, hdr ...string) answer {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := c.request(method, path, r, hdr...)
	if err != nil {
		return answer{err: err}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(data, &e)
	return answer{status: resp.StatusCode, code: e.ErrorCode, retryAfter: resp.Header.Get("Retry-After")}
}

// TestStoreOutageAnswers503 stops the server's PostgreSQL under concurrent requests: each
// is answered 503 ERR_251 with Retry-After, the outage is one error line and one recovery
// line, a refused keyed POST runs when retried (no 503 is replayed), and once PostgreSQL is
// back the same server answers again with nothing lost.
func TestStoreOutageAnswers503(t *testing.T) {
	cluster := pgcluster.Own(t)
	dsn, err := cluster.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	// Trust authentication ignores the password; the log must not show it.
	const password = "outage-password-never-logged"
	dsn += " password=" + password
	core, logs := observer.New(zapcore.InfoLevel)
	srv := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, func(o *apiserver.Options) { o.Logger = zap.New(core) })
	c := &tc{t: t, srv: srv, token: srv.APIKey}

	var before []string
	for i := range 3 {
		before = append(before, str(c.ok(201, "POST", "/ip_policies", map[string]any{"description": fmt.Sprint("before ", i)})["id"]))
	}
	if err := cluster.Down(); err != nil {
		t.Fatal(err)
	}

	// Reads, creates (keyed or not), updates and deletes, at once.
	const rounds = 4
	requests := []func(i int) answer{
		func(int) answer { return c.send("GET", "/ip_policies", "") },
		func(int) answer { return c.send("GET", "/ip_policies/"+before[0], "") },
		func(i int) answer {
			return c.send("POST", "/ip_policies", `{"description":"during"}`, "Idempotency-Key", fmt.Sprint("during-", i))
		},
		func(int) answer { return c.send("POST", "/ip_policies", `{"description":"during"}`) },
		func(int) answer { return c.send("PATCH", "/ip_policies/"+before[1], `{"description":"changed"}`) },
		func(int) answer { return c.send("DELETE", "/ip_policies/"+before[2], "") },
	}
	answers := make([]answer, rounds*len(requests))
	apiservertest.AtOnce(len(answers), func(i int) { answers[i] = requests[i%len(requests)](i / len(requests)) })
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.code != "ERR_251" || a.retryAfter != "1" {
			t.Fatalf("request %d during the outage: %d %q Retry-After %q, err %v; want 503 ERR_251 Retry-After 1", i, a.status, a.code, a.retryAfter, a.err)
		}
	}
	// Through the checked client too: the OpenAPI document declares the 503.
	c.fails(http.StatusServiceUnavailable, "ERR_251", "GET", "/ip_policies", nil)
	refused := len(answers) + 1
	if resp, err := http.Get(srv.URL + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz during the outage: %v %v", resp, err)
	}
	if got := series(scrape(t, c), "warren_store_unavailable_total").GetCounter().GetValue(); got < float64(refused) {
		t.Fatalf("warren_store_unavailable_total = %v, want at least the %d refused requests", got, refused)
	}

	if err := cluster.Up(); err != nil {
		t.Fatal(err)
	}
	// A refused keyed POST was not recorded: the same key and body now create.
	created := c.req("POST", "/ip_policies", `{"description":"during"}`, "Idempotency-Key", "during-0")
	if created.status != http.StatusCreated || created.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("keyed POST after the outage: %d %s (replayed %q)", created.status, created.raw, created.header.Get("Idempotent-Replayed"))
	}
	page := c.ok(200, "GET", "/ip_policies", nil)
	if got := len(page["ip_policies"].([]any)); got != len(before)+1 {
		t.Fatalf("after the outage: %d IP policies, want %d: %v", got, len(before)+1, page)
	}
	for i, id := range before {
		if got := str(c.ok(200, "GET", "/ip_policies/"+id, nil)["description"]); got != fmt.Sprint("before ", i) {
			t.Fatalf("%s: description %q after the outage", id, got)
		}
	}

	errorLines := logs.FilterLevelExact(zapcore.ErrorLevel).AllUntimed()
	if len(errorLines) != 1 || !strings.Contains(errorLines[0].Message, "store unavailable") {
		t.Fatalf("want one error line, the outage's; got %d: %v", len(errorLines), errorLines)
	}
	back := logs.FilterMessage("store available again").AllUntimed()
	if len(back) != 1 {
		t.Fatalf("want one recovery line, got %v", back)
	}
	if got := back[0].ContextMap()["refused_requests"]; got != int64(refused) {
		t.Fatalf("recovery line: refused_requests %v, want %d", got, refused)
	}
	noSecrets(t, logs, password)
}
