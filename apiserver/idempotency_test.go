package apiserver_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
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
	onEachDatabase(t, testReplaysTheFirstAnswer)
}

func testReplaysTheFirstAnswer(t *testing.T, c *tc) {
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

func TestIdempotencyKeyReplaysClientErrors(t *testing.T) { onEachDatabase(t, testReplaysClientErrors) }

func testReplaysClientErrors(t *testing.T, c *tc) {
	first := c.fails(http.StatusBadRequest, "ERR_214", "POST", "/ip_policies", map[string]any{"nme": "x"}, idemHeader, "k")
	again := c.req("POST", "/ip_policies", map[string]any{"nme": "x"}, idemHeader, "k")
	equal(t, "replayed status", again.status, http.StatusBadRequest)
	equal(t, "replayed body", again.body, first)
	equal(t, "Idempotent-Replayed", again.header.Get("Idempotent-Replayed"), "true")
	// The corrected request is another body: it needs a new key.
	c.fails(http.StatusUnprocessableEntity, "ERR_215", "POST", "/ip_policies", map[string]any{"name": "x"}, idemHeader, "k")
	equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 0)

	// A 4xx found in the write transaction (a missing reference) is rolled back with it,
	// then recorded and replayed like the others.
	bad := map[string]any{"ip_policy_id": "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", "cidr": "10.0.0.0/8", "action": "allow"}
	first = c.fails(http.StatusBadRequest, "ERR_1414", "POST", "/ip_policy_rules", bad, idemHeader, "missing-ref")
	again = c.req("POST", "/ip_policy_rules", bad, idemHeader, "missing-ref")
	equal(t, "replayed", []any{again.status, again.body, again.header.Get("Idempotent-Replayed")}, []any{http.StatusBadRequest, first, "true"})
	equal(t, "IP policy rules", c.stored("ip_policy_rule", c.srv.AccountID), 0)
	equal(t, "records", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 2)
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

// TestIdempotencyKeyConcurrent sends the same POST many times at once: exactly one creates,
// the others replay its answer (their transactions meet its record: no 409, which only the
// POSTs that claim their key first answer).
func TestIdempotencyKeyConcurrent(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, c *tc) {
		const n = 12
		answers := make([]apiservertest.Answer, n)
		apiservertest.AtOnce(n, func(i int) {
			answers[i] = apiservertest.KeyedPOST(c.srv.URL, c.token, "/ip_policies", `{"description":"once"}`, "same-key")
		})
		equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)
		apiservertest.CheckOneCreation(t, answers)
	})
}

const idemReplayedHeader = api.IdempotentReplayedHeader

func TestIdempotencyKeyExpires(t *testing.T) {
	var clock testClock
	onEachDatabase(t, func(t *testing.T, c *tc) { testKeyExpires(t, c, &clock) }, clock.configure)
}

func testKeyExpires(t *testing.T, c *tc, clock *testClock) {
	clock.set(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
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
	onEachDatabase(t, func(t *testing.T, c *tc) {
		fail.Store(true)
		testReleasedOn5xx(t, c, &fail)
	}, func(o *apiserver.Options) { o.Store = failingStore{Store: o.Store, kind: "ip_policy", fail: &fail} })
}

func testReleasedOn5xx(t *testing.T, c *tc, fail *atomic.Bool) {
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

// commitFailingStore fails the commit of the next write transaction that writes the answer
// of an Idempotency-Key (a record with its secret) while fail is set, once: the
// transaction is rolled back, as when the database or the process dies at COMMIT.
type commitFailingStore struct {
	store.Store
	fail *atomic.Bool
}

func (s commitFailingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Write(ctx, func(tx store.Tx) error {
		watched := &answerWatchTx{Tx: tx}
		if err := fn(watched); err != nil {
			return err
		}
		if watched.answered && s.fail.CompareAndSwap(true, false) {
			return errors.New("commit: connection lost")
		}
		return nil
	})
}

type answerWatchTx struct {
	store.Tx
	answered bool
}

func (tx *answerWatchTx) Insert(ctx context.Context, o *store.Object) error {
	tx.answered = tx.answered || (o.Kind == apiserver.KindIdempotencyKey && o.Secret != nil)
	return tx.Tx.Insert(ctx, o)
}

func (tx *answerWatchTx) Update(ctx context.Context, o *store.Object) error {
	tx.answered = tx.answered || (o.Kind == apiserver.KindIdempotencyKey && o.Secret != nil)
	return tx.Tx.Update(ctx, o)
}

// TestIdempotencyKeyCommitFails: the create and the record of its answer commit together, so
// a failure at the commit of the record leaves neither, and the retry creates once. (Had the
// record its own transaction after the create, the create would stay without its record
// and the retry would create a second object.)
func TestIdempotencyKeyCommitFails(t *testing.T) {
	var fail atomic.Bool
	onEachDatabase(t, func(t *testing.T, c *tc) {
		fail.Store(true)
		body := map[string]any{"description": "once"}
		r := c.req("POST", "/ip_policies", body, idemHeader, "commit-fails")
		equal(t, "status", r.status, http.StatusInternalServerError)
		equal(t, "failed once", fail.Load(), false)
		equal(t, "IP policies after the failed commit", c.stored("ip_policy", c.srv.AccountID), 0)
		equal(t, "records after the failed commit", c.stored(apiserver.KindIdempotencyKey, c.srv.AccountID), 0)

		retry := c.req("POST", "/ip_policies", body, idemHeader, "commit-fails")
		equal(t, "retry", []any{retry.status, retry.header.Get(idemReplayedHeader)}, []any{http.StatusCreated, ""})
		again := c.req("POST", "/ip_policies", body, idemHeader, "commit-fails")
		equal(t, "replay", []any{again.status, again.raw, again.header.Get(idemReplayedHeader)}, []any{http.StatusCreated, retry.raw, "true"})
		equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 1)
	}, func(o *apiserver.Options) { o.Store = commitFailingStore{Store: o.Store, fail: &fail} })
}

// An event subscription's POST .../sources answers in its write transaction too.
func TestIdempotencyKeyEventSource(t *testing.T) {
	c := newTC(t)
	sub := c.ok(http.StatusCreated, "POST", "/event_subscriptions", map[string]any{"description": "keyed"})
	path := "/event_subscriptions/" + str(sub["id"]) + "/sources"
	body := map[string]any{"type": "ip_policy_created.v0"}
	first := c.req("POST", path, body, idemHeader, "source-once")
	again := c.req("POST", path, body, idemHeader, "source-once")
	equal(t, "answers", []any{first.status, first.header.Get(idemReplayedHeader), again.status, again.raw, again.header.Get(idemReplayedHeader)},
		[]any{http.StatusCreated, "", http.StatusCreated, first.raw, "true"})
	// Without the key the same POST runs again: the source exists already.
	c.fails(http.StatusBadRequest, "ERR_5127", "POST", path, body)
	equal(t, "sources", len(c.ok(http.StatusOK, "GET", path, nil)["sources"].([]any)), 1)
}
