package client

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"
)

func TestServerWait(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		headers map[string]string
		want    time.Duration
		ok      bool
	}{
		{nil, 0, false}, // none: the backoff applies
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": "0"}, 0, true},                   // retry now
		{map[string]string{"Retry-After": "600"}, 600 * time.Second, true}, // honoured, not capped
		{map[string]string{"Retry-After": now.Add(5 * time.Second).Format(http.TimeFormat)}, 5 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true}, // past date
		{map[string]string{"Retry-After": "soon"}, 0, false},                                     // unreadable
		{map[string]string{"Retry-After": "-1"}, 0, false},
		// X-RateLimit-Reset only without Retry-After: seconds, or a Unix time.
		{map[string]string{"X-RateLimit-Reset": "7"}, 7 * time.Second, true},
		{map[string]string{"X-RateLimit-Reset": fmt.Sprint(now.Add(9 * time.Second).Unix())}, 9 * time.Second, true},
		{map[string]string{"X-RateLimit-Reset": fmt.Sprint(now.Add(-9 * time.Second).Unix())}, 0, true},
		{map[string]string{"Retry-After": "2", "X-RateLimit-Reset": "30"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "soon", "X-RateLimit-Reset": "4"}, 4 * time.Second, true},
	} {
		h := http.Header{}
		for k, v := range tt.headers {
			h.Set(k, v)
		}
		got, ok := serverWait(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v: wait %v, %v; want %v, %v", tt.headers, got, ok, tt.want, tt.ok)
		}
	}
}

// fixedRand returns a rand source that always answers pick(n).
func fixedRand(pick func(n int64) int64) func(int64) int64 { return pick }

// TestBackoffBounds pins the equal-jitter backoff: the step doubles from 250 ms up to the
// cap, and the wait lies in the step's upper half.
func TestBackoffBounds(t *testing.T) {
	low := retryPolicy{maxBackoff: 10 * time.Second, randN: fixedRand(func(int64) int64 { return 0 })}
	high := retryPolicy{maxBackoff: 10 * time.Second, randN: fixedRand(func(n int64) int64 { return n - 1 })}
	for attempt, step := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		if got := low.backoff(attempt); got != step/2 {
			t.Errorf("attempt %d: shortest wait %v, want %v", attempt, got, step/2)
		}
		if got := high.backoff(attempt); got != step {
			t.Errorf("attempt %d: longest wait %v, want %v", attempt, got, step)
		}
	}
	if got := high.backoff(1000); got != 10*time.Second {
		t.Errorf("attempt 1000: %v, want the cap", got)
	}
}

// TestJitterSpreadsWorkers: ten workers retrying at the same moment, told the same thing,
// wait different times: with the exponential backoff and on top of a server's Retry-After.
func TestJitterSpreadsWorkers(t *testing.T) {
	p := retryPolicy{maxBackoff: 10 * time.Second, randN: rand.New(rand.NewPCG(1, 2)).Int64N}
	h := http.Header{"Retry-After": {"1"}}
	now := time.Now()
	for name, wait := range map[string]func() time.Duration{
		"backoff":     func() time.Duration { return p.backoff(2) },      // step 1 s: waits in [0.5 s, 1 s]
		"retry-after": func() time.Duration { return p.wait(h, 0, now) }, // 1 s plus [0, 0.5 s)
	} {
		seen := map[time.Duration]bool{}
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for range 10 {
			d := wait()
			seen[d] = true
			lo, hi = min(lo, d), max(hi, d)
		}
		if len(seen) != 10 || hi-lo < 200*time.Millisecond {
			t.Errorf("%s: 10 workers got %d distinct waits spread over %v", name, len(seen), hi-lo)
		}
		if name == "retry-after" && (lo < time.Second || hi >= 1500*time.Millisecond) {
			t.Errorf("retry-after: waits %v..%v, want within [1s, 1.5s)", lo, hi)
		}
	}
	// A long Retry-After gets a proportional spread: half of it at most.
	top := retryPolicy{randN: fixedRand(func(n int64) int64 { return n - 1 })}
	if got := top.wait(http.Header{"Retry-After": {"10"}}, 0, now); got != 15*time.Second-1 {
		t.Errorf("Retry-After 10 with the largest spread: %v", got)
	}
}

func TestRetryable(t *testing.T) {
	status := func(code int) *resty.Response {
		return &resty.Response{RawResponse: &http.Response{StatusCode: code}}
	}
	reset := &url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	refused := &url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	eof := &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}
	badCert := &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}
	canceled := &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}
	for _, tt := range []struct {
		method string
		resp   *resty.Response
		err    error
		want   bool
	}{
		{"GET", status(429), nil, true},
		{"POST", status(429), nil, true}, // the server did not act
		{"PATCH", status(503), nil, true},
		{"GET", status(500), nil, false},
		{"GET", status(502), nil, false},
		{"GET", status(200), nil, false},
		{"GET", nil, reset, true},
		{"PUT", nil, refused, true},
		{"DELETE", nil, eof, true},
		{"HEAD", nil, reset, true},
		{"POST", nil, reset, false}, // may have reached the server
		{"PATCH", nil, eof, false},
		{"POST", nil, refused, false},
		{"GET", nil, badCert, false}, // would fail the same way again
		{"GET", nil, canceled, false},
		{"GET", nil, errors.New("unsupported protocol scheme"), false},
		{"GET", status(409), nil, false},
	} {
		if got := retryable(tt.method, false, tt.resp, tt.err); got != tt.want {
			t.Errorf("%s %v %v: retryable = %v, want %v", tt.method, tt.resp, tt.err, got, tt.want)
		}
	}
}

// With an Idempotency-Key, a POST is retried after a broken connection and while the same
// request is still running (409), never after a server error.
func TestRetryableKeyed(t *testing.T) {
	status := func(code int) *resty.Response {
		return &resty.Response{RawResponse: &http.Response{StatusCode: code}}
	}
	reset := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	badCert := &url.Error{Op: "Post", URL: "https://x", Err: x509.UnknownAuthorityError{}}
	for _, tt := range []struct {
		resp *resty.Response
		err  error
		want bool
	}{
		{nil, reset, true},
		{status(409).SetBody([]byte(`{"status_code":409,"error_code":"ERR_215","msg":"running","details":{"param":"Idempotency-Key"}}`)), nil, true},
		{status(409), nil, false}, // another conflict than the key's
		{status(429), nil, true},
		{status(500), nil, false},
		{status(400), nil, false},
		{status(422), nil, false},
		{nil, badCert, false},
	} {
		if got := retryable("POST", true, tt.resp, tt.err); got != tt.want {
			t.Errorf("keyed POST %v %v: retryable = %v, want %v", tt.resp, tt.err, got, tt.want)
		}
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want retryPolicy
	}{
		{Config{}, retryPolicy{maxRetries: -1, timeout: DefaultRetryTimeout, maxBackoff: DefaultMaxBackoff}},
		{Config{MaxRetries: -1, RetryTimeout: time.Minute, MaxBackoff: time.Second}, retryPolicy{maxRetries: 0, timeout: time.Minute, maxBackoff: time.Second}},
		{Config{MaxRetries: 7}, retryPolicy{maxRetries: 7, timeout: DefaultRetryTimeout, maxBackoff: DefaultMaxBackoff}},
	} {
		got := newRetryPolicy(tt.cfg)
		if got.maxRetries != tt.want.maxRetries || got.timeout != tt.want.timeout || got.maxBackoff != tt.want.maxBackoff || got.randN == nil {
			t.Errorf("%+v: policy %+v, want %+v", tt.cfg, got, tt.want)
		}
	}
}

// A client keeps enough idle connections for terraform's parallelism (10 by default), so that
// a plan of many resources reuses its connections instead of opening one per call.
func TestTransportKeepsConnectionsForParallelism(t *testing.T) {
	c := New(Config{BaseURL: "http://127.0.0.1:1"})
	tr, ok := c.http.GetClient().Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T, want *http.Transport", c.http.GetClient().Transport)
	}
	if tr.MaxIdleConnsPerHost < 10 || tr.MaxIdleConns < tr.MaxIdleConnsPerHost {
		t.Errorf("MaxIdleConnsPerHost = %d, MaxIdleConns = %d: want at least 10 per host, and no lower total", tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
	if tr.Proxy == nil {
		t.Error("the transport ignores the proxy environment variables")
	}
	// A client given its own HTTP client keeps it as it is.
	own := &http.Client{}
	if got := New(Config{BaseURL: "http://127.0.0.1:1", HTTPClient: own}).http.GetClient(); got != own {
		t.Errorf("HTTPClient %p was replaced by %p", own, got)
	}
}
