package apiserver_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

const idemHeader = "Idempotency-Key"

// stored returns how many objects of kind the account holds.
func (c *tc) stored(kind, accountID string) int {
	c.t.Helper()
	var n int
	err := c.srv.Store.Read(context.Background(), func(tx store.Tx) (err error) {
		n, err = tx.Count(context.Background(), kind, accountID)
		return err
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

func TestIdempotencyKeyReplaysTheFirstAnswer(t *testing.T) {
	c := newTC(t)
	body := map[string]any{"description": "office"}
	first := c.req("POST", "/ip_policies", body, idemHeader, "create-office-1")
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first POST: %d %q %s", first.status, first.header.Get("Idempotent-Replayed"), first.raw)
	}
	again := c.req("POST", "/ip_policies", body, idemHeader, "create-office-1")
	equal(t, "replayed status", again.status, http.StatusCreated)
	equal(t, "replayed body", again.raw, first.raw)
	equal(t, "Idempotent-Replayed", again.header.Get("Idempotent-Replayed"), "true")
	equal(t, "Content-Type", again.header.Get("Content-Type"), "application/json")
	if op := again.header.Get("Service-Operation-Id"); op == "" || op == first.header.Get("Service-Operation-Id") {
		t.Fatalf("the replay has operation id %q, want its own", op)
	}
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)

	// The same key for another body or another path is refused and changes nothing.
	for _, r := range []struct {
		path string
		body any
	}{{"/ip_policies", map[string]any{"description": "home"}}, {"/ip_policies", "{}"}, {"/ip_policies?x=1", body}, {"/service_users", map[string]any{"name": "office"}}} {
		got := c.fails(http.StatusUnprocessableEntity, "ERR_215", "POST", r.path, r.body, idemHeader, "create-office-1")
		equal(t, "msg", got["msg"], "The Idempotency-Key was already used for a request with another method, path or body; use a new key for a new request.")
		equal(t, "param", got["details"].(map[string]any)["param"], "Idempotency-Key")
	}
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)
	equal(t, "service users", c.stored("service_user", c.srv.AccountID), 0)

	// Another key, and no key at all, run the request again.
	if r := c.req("POST", "/ip_policies", body, idemHeader, "create-office-2"); r.status != http.StatusCreated || r.raw == first.raw {
		t.Fatalf("another key: %d %s", r.status, r.raw)
	}
	c.ok(http.StatusCreated, "POST", "/ip_policies", body)
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 3)

	// A key is per account: the same key and body in another account is a request of its own.
	other := c.as(c.srv.NewAccount(t))
	r := other.req("POST", "/ip_policies", body, idemHeader, "create-office-1")
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" || r.body["id"] == first.body["id"] {
		t.Fatalf("other account: %d %q %s", r.status, r.header.Get("Idempotent-Replayed"), r.raw)
	}
}

func TestIdempotencyKeyReplaysClientErrors(t *testing.T) {
	c := newTC(t)
	first := c.fails(http.StatusBadRequest, "ERR_214", "POST", "/ip_policies", map[string]any{"nme": "x"}, idemHeader, "k")
	again := c.req("POST", "/ip_policies", map[string]any{"nme": "x"}, idemHeader, "k")
	equal(t, "replayed status", again.status, http.StatusBadRequest)
	equal(t, "replayed body", again.body, first)
	equal(t, "Idempotent-Replayed", again.header.Get("Idempotent-Replayed"), "true")
	// The corrected request is another body: it needs a new key.
	c.fails(http.StatusUnprocessableEntity, "ERR_215", "POST", "/ip_policies", map[string]any{"name": "x"}, idemHeader, "k")
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 0)
}

func TestIdempotencyKeyChecked(t *testing.T) {
	c := newTC(t)
	for _, key := range []string{strings.Repeat("k", 256), "clé", "a\tb"} {
		got := c.fails(http.StatusBadRequest, "ERR_215", "POST", "/ip_policies", map[string]any{}, idemHeader, key)
		details := got["details"].(map[string]any)
		equal(t, "param", details["param"], "Idempotency-Key")
		if !strings.HasPrefix(str(got["msg"]), "The Idempotency-Key header ") || strings.Contains(str(got["msg"]), key) {
			t.Fatalf("msg %q", got["msg"])
		}
	}
	c.ok(http.StatusCreated, "POST", "/ip_policies", nil) // no key: nothing checked
	if r := c.req("POST", "/ip_policies", map[string]any{}, idemHeader, strings.Repeat("k", 255)); r.status != http.StatusCreated {
		t.Fatalf("a 255-character key: %d %s", r.status, r.raw)
	}
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 2)
	equal(t, "records", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 1)
}

// TestIdempotencyKeyConcurrent sends the same POST many times at once: exactly one runs.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	c := newTC(t)
	const n = 12
	statuses := make([]int, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], bodies[i] = rawPOST(c, "/ip_policies", `{"description":"once"}`, "same-key")
		}()
	}
	close(start)
	wg.Wait()
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)
	var created string
	for i, status := range statuses {
		switch status {
		case http.StatusCreated:
			if created != "" && bodies[i] != created {
				t.Fatalf("two different answers:\n%s\n%s", created, bodies[i])
			}
			created = bodies[i]
		case http.StatusConflict:
			if !strings.Contains(bodies[i], `"error_code":"ERR_215"`) || !strings.Contains(bodies[i], "still being processed") {
				t.Fatalf("409 body %s", bodies[i])
			}
		default:
			t.Fatalf("status %d: %s", status, bodies[i])
		}
	}
	if created == "" {
		t.Fatal("no request created the policy")
	}
}

// rawPOST sends a POST from any goroutine (no t.Fatal) and returns its status and body.
func rawPOST(c *tc, path, body, key string) (int, string) {
	req, _ := http.NewRequest("POST", c.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idemHeader, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestIdempotencyKeyExpires(t *testing.T) {
	var clock testClock
	clock.set(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
	c := newTC(t, clock.configure)
	after := func(d time.Duration) { clock.set(clock.now().Add(d)) }
	body := map[string]any{"description": "daily"}
	a := c.req("POST", "/ip_policies", body, idemHeader, "daily")
	after(24*time.Hour - time.Second)
	b := c.req("POST", "/ip_policies", body, idemHeader, "daily")
	equal(t, "replay a second before expiry", b.raw, a.raw)
	equal(t, "Idempotent-Replayed", b.header.Get("Idempotent-Replayed"), "true")

	after(time.Second)
	fresh := c.req("POST", "/ip_policies", body, idemHeader, "daily")
	if fresh.status != http.StatusCreated || fresh.header.Get("Idempotent-Replayed") != "" || fresh.body["id"] == a.body["id"] {
		t.Fatalf("after 24 h: %d %s", fresh.status, fresh.raw)
	}
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 2)
	equal(t, "records", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 1)

	// An expired record of another key is pruned by the next claim of the account.
	c.req("POST", "/ip_policies", body, idemHeader, "other")
	equal(t, "records", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 2)
	after(25 * time.Hour)
	c.req("POST", "/ip_policies", body, idemHeader, "third")
	equal(t, "records after pruning", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 1)
}

// failingStore fails the inserts of one kind while fail is set, as a broken database would.
type failingStore struct {
	store.Store
	kind string
	fail *atomic.Bool
}

func (s failingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Write(ctx, func(tx store.Tx) error { return fn(failingTx{tx, s}) })
}

type failingTx struct {
	store.Tx
	s failingStore
}

func (tx failingTx) Insert(ctx context.Context, o *store.Object) error {
	if o.Kind == tx.s.kind && tx.s.fail.Load() {
		return errors.New("disk on fire")
	}
	return tx.Tx.Insert(ctx, o)
}

// TestIdempotencyKeyReleasedOn5xx: a server failure is not recorded, so a retry runs again.
func TestIdempotencyKeyReleasedOn5xx(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	c := newTC(t, func(o *apiserver.Options) { o.Store = failingStore{Store: o.Store, kind: "ip_policy", fail: &fail} })
	r := c.req("POST", "/ip_policies", map[string]any{}, idemHeader, "retry-me")
	equal(t, "status", r.status, http.StatusInternalServerError)
	equal(t, "records", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 0)
	fail.Store(false)
	r = c.req("POST", "/ip_policies", map[string]any{}, idemHeader, "retry-me")
	if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)
}
