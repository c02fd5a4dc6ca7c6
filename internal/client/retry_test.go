package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"
)

func TestRetryAfter(t *testing.T) {
	limit := 10 * time.Second
	for _, tt := range []struct {
		header   string
		min, max time.Duration
	}{
		{"", 0, 0}, // none: resty's backoff with jitter
		{"3", 3 * time.Second, 3 * time.Second},
		{"0", time.Millisecond, time.Millisecond}, // retry now
		{"60", limit, limit},                      // capped
		{time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat), 3 * time.Second, 5 * time.Second},
		{time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), time.Millisecond, time.Millisecond}, // past date
		{"soon", 0, 0}, // unreadable: the backoff applies
	} {
		resp := &resty.Response{RawResponse: &http.Response{Header: http.Header{}}}
		if tt.header != "" {
			resp.RawResponse.Header.Set("Retry-After", tt.header)
		}
		got, err := retryAfter(limit)(nil, resp)
		if err != nil || got < tt.min || got > tt.max {
			t.Errorf("Retry-After %q: wait %v, %v; want %v..%v", tt.header, got, err, tt.min, tt.max)
		}
	}
}
