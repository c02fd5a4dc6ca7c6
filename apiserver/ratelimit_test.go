package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAccountLimiter(t *testing.T) {
	l := newAccountLimiter(3)
	now := time.Unix(1_700_000_000, 0)
	for i := range 3 {
		if ok, _ := l.allow("ac_a", now); !ok {
			t.Fatalf("request %d refused within the burst", i)
		}
	}
	ok, wait := l.allow("ac_a", now)
	if ok || wait <= 0 || wait > 20*time.Second {
		t.Fatalf("4th request: ok=%v wait=%v, want refused with a wait of at most 20s", ok, wait)
	}
	if ok, _ := l.allow("ac_b", now); !ok {
		t.Fatal("another account shares the allowance")
	}
	if ok, _ := l.allow("ac_a", now.Add(20*time.Second)); !ok {
		t.Fatal("the allowance was not refilled after 20s (3 per minute)")
	}
}

func TestRateLimitAnswers429(t *testing.T) {
	s, token := newTestServer(t, nil)
	s.limiter = newAccountLimiter(2)
	var last *httptest.ResponseRecorder
	for range 3 {
		req := httptest.NewRequest("GET", "/api_keys", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		last = httptest.NewRecorder()
		s.ServeHTTP(last, req)
	}
	if last.Code != http.StatusTooManyRequests || last.Header().Get("Retry-After") == "" {
		t.Fatalf("got %d, Retry-After %q: %s", last.Code, last.Header().Get("Retry-After"), last.Body)
	}
}
