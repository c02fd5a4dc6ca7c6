package apiserver

import (
	"context"
	"testing"
	"time"
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
