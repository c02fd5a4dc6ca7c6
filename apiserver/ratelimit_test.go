package apiserver

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
)

func TestAccountLimiter(t *testing.T) {
	l := newAccountLimiter(3) // one request back every 20 s
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	for i := range 3 {
		d := l.allow(ctx, "ac_a", now)
		if want := (rateDecision{allowed: true, remaining: 2 - i, reset: time.Duration(i+1) * 20 * time.Second}); d != want {
			t.Fatalf("request %d: %+v, want %+v", i, d, want)
		}
	}
	if d := l.allow(ctx, "ac_a", now); d != (rateDecision{remaining: 0, reset: time.Minute, retryAfter: 20 * time.Second}) {
		t.Fatalf("4th request: %+v, want refused for 20s", d)
	}
	if d := l.allow(ctx, "ac_b", now); !d.allowed {
		t.Fatal("another account shares the allowance")
	}
	// Half a token later: still refused, and the refusal took nothing.
	if d := l.allow(ctx, "ac_a", now.Add(10*time.Second)); d.allowed || d.retryAfter != 10*time.Second || d.reset != 50*time.Second {
		t.Fatalf("after 10s: %+v", d)
	}
	if d := l.allow(ctx, "ac_a", now.Add(20*time.Second)); !d.allowed || d.remaining != 0 || d.reset != time.Minute {
		t.Fatalf("after 20s: %+v, want the refilled request taken", d)
	}
	if d := l.allow(ctx, "ac_a", now.Add(2*time.Minute)); !d.allowed || d.remaining != 2 {
		t.Fatalf("after 2 min: %+v, want a full allowance less this request", d)
	}
}

// TestLeasedAllowanceIsShared: two limiters (two replicas) lease tokens of one account from
// the same buckets; together they admit exactly the allowance, however the requests
// alternate, and leased tokens left unused lapse after the time the bucket takes to regain
// a lease.
func TestLeasedAllowanceIsShared(t *testing.T) {
	ctx := context.Background()
	buckets := newMemoryBuckets()
	const perMinute = 600
	lease := rateLease(perMinute)
	a := newRateLimiter(perMinute, buckets, lease)
	b := newRateLimiter(perMinute, buckets, lease)
	same(t, "lease", lease, 6)
	same(t, "lease lapses after", a.leaseTTL, 600*time.Millisecond)
	now := time.Unix(1_700_000_000, 0)
	allowed := 0
	for i := 0; ; i++ {
		// Two requests on a, one on b: uneven, so the leases run out at different times.
		da, db := a.allow(ctx, "ac_a", now), b.allow(ctx, "ac_a", now)
		if i%2 == 0 && da.allowed {
			allowed++
			da = a.allow(ctx, "ac_a", now)
		}
		for _, d := range []rateDecision{da, db} {
			if d.allowed {
				allowed++
			}
		}
		if !da.allowed && !db.allowed {
			same(t, "retry after", db.retryAfter, 100*time.Millisecond)
			break
		}
	}
	same(t, "requests admitted by both", allowed, perMinute)
	if d := b.allow(ctx, "ac_b", now); !d.allowed || d.remaining != perMinute-1 {
		t.Fatalf("another account: %+v, want its own full allowance", d)
	}

	// A lease partly used lapses: 5 tokens are left on a after this request ...
	later := now.Add(time.Minute)
	if d := a.allow(ctx, "ac_a", later); !d.allowed || d.remaining != perMinute-1 {
		t.Fatalf("after a minute: %+v", d)
	}
	same(t, "bucket after the lease", buckets.m["api:ac_a"].tokens, float64(perMinute-lease))
	// ... usable while it lasts, without a take from the bucket ...
	a.allow(ctx, "ac_a", later.Add(a.leaseTTL-time.Nanosecond))
	same(t, "last take while the lease lasts", buckets.m["api:ac_a"].at, later)
	// ... and gone once it lapsed: this request takes a new lease.
	a.allow(ctx, "ac_a", later.Add(a.leaseTTL))
	same(t, "last take after the lease lapsed", buckets.m["api:ac_a"].at, later.Add(a.leaseTTL))
}

func TestConcurrencyCap(t *testing.T) {
	cc := newConcurrencyCap(2)
	if !cc.enter("ac_a") || !cc.enter("ac_a") {
		t.Fatal("the first two requests were refused")
	}
	if cc.enter("ac_a") {
		t.Fatal("a third request at once was let in")
	}
	if !cc.enter("ac_b") {
		t.Fatal("another account was refused")
	}
	cc.leave("ac_a")
	if !cc.enter("ac_a") {
		t.Fatal("a slot given back was not taken again")
	}
	cc.leave("ac_a")
	cc.leave("ac_a")
	cc.leave("ac_b")
	same(t, "accounts in flight", len(cc.inFlight), 0)
}

// TestConcurrencySlotFreedOnPanic: a handler that panics gives its slot back.
func TestConcurrencySlotFreedOnPanic(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := New(ctx, Options{Store: db, BaseURL: "http://x", MaxConcurrentRequests: 1, Events: EventOptions{Workers: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := s.outer(s.apiRoute(op{}, func(c *call) error { panic("handler bug") }))
	for i := range 2 { // the second would be refused with ERR_225 had the first kept its slot
		r := httptest.NewRequest("GET", "/ip_policies", nil)
		r.Header.Set("Authorization", "Bearer "+s.BootstrapToken())
		r.Header.Set("Service-Version", "2")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 500 {
			t.Fatalf("request %d: %d %s, want the panic's 500", i, w.Code, w.Body)
		}
	}
	same(t, "accounts in flight", len(s.concurrency.inFlight), 0)
}

func same[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
