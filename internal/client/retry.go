package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Defaults of Config's retry settings.
const (
	DefaultRetryTimeout = 5 * time.Minute
	DefaultMaxBackoff   = 10 * time.Second
	// baseBackoff is the first step of the exponential backoff.
	baseBackoff = 250 * time.Millisecond
	// minRetryAfterSpread is the least random spread added to a server's Retry-After, so that
	// clients told the same whole second do not come back together.
	minRetryAfterSpread = 500 * time.Millisecond
	// maxConnectionRetries caps retries of broken connections, whatever the timeout: a server
	// restarting is back within seconds, while a wrong api_url should fail fast, not after
	// minutes.
	maxConnectionRetries = 4
)

// ErrRetryTimeout is in the error of a request given up because its next retry would come
// after Config.RetryTimeout.
var ErrRetryTimeout = errors.New("retry timeout")

// retryPolicy decides which answers are retried and how long to wait before each retry.
// resty's own retries are off: they know no total deadline and cannot tell a POST from a GET
// when a connection fails.
type retryPolicy struct {
	maxRetries int           // retries after the first attempt; -1 for no count limit
	timeout    time.Duration // no retry starts after the first attempt's start + timeout
	maxBackoff time.Duration // cap of the exponential backoff (not of the server's Retry-After)
	randN      func(n int64) int64
}

func newRetryPolicy(cfg Config) retryPolicy {
	p := retryPolicy{maxRetries: cfg.MaxRetries, timeout: cfg.RetryTimeout, maxBackoff: cfg.MaxBackoff, randN: rand.Int64N}
	switch {
	case cfg.MaxRetries == 0:
		p.maxRetries = -1
	case cfg.MaxRetries < 0:
		p.maxRetries = 0
	}
	if p.timeout <= 0 {
		p.timeout = DefaultRetryTimeout
	}
	if p.maxBackoff <= 0 {
		p.maxBackoff = DefaultMaxBackoff
	}
	return p
}

// retryable reports whether an attempt's outcome may be retried. 429 and 503 mean the server
// did not act, so any method is retried. A failed connection is retried only for idempotent
// methods and for requests sent with an Idempotency-Key (keyed): a PATCH, or a POST without a
// key, may have reached the server before the connection broke. A keyed request also waits
// out the server's 409 about its key: the same request is still being processed.
func retryable(method string, keyed bool, resp *resty.Response, err error) bool {
	if err != nil {
		return (idempotent(method) || keyed) && connectionError(err)
	}
	switch resp.StatusCode() {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusConflict:
		return keyed && apiError(resp).Body.Details["param"] == api.IdempotencyKeyHeader
	}
	return false
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// connectionError reports a connection refused, reset or closed before the answer. Other
// failures (a bad certificate, an unknown host) would fail the same way again.
func connectionError(err error) bool {
	for _, target := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// wait is how long to wait before retry number attempt+1 (attempt counts from 0): what the
// server asks for (Retry-After, else X-RateLimit-Reset) plus a random spread, or else the
// jittered exponential backoff.
func (p retryPolicy) wait(h http.Header, attempt int, now time.Time) time.Duration {
	if d, ok := serverWait(h, now); ok {
		return d + p.randDuration(max(d/2, minRetryAfterSpread))
	}
	return p.backoff(attempt)
}

// backoff is exponential backoff with "equal jitter": the step doubles from baseBackoff up to
// maxBackoff, and the wait is a random point in its upper half, so parallel clients spread
// out yet none retries almost at once.
func (p retryPolicy) backoff(attempt int) time.Duration {
	step := p.maxBackoff
	if attempt < 30 {
		step = min(baseBackoff<<attempt, p.maxBackoff)
	}
	return step/2 + p.randDuration(step/2+1)
}

// randDuration is uniform in [0, n).
func (p retryPolicy) randDuration(n time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(p.randN(int64(n)))
}

// serverWait reads the server's advice: Retry-After in seconds or as an HTTP date, else
// X-RateLimit-Reset in seconds from now or, when it is that large, as a Unix time. A time in
// the past means "now"; an unreadable value counts as none.
func serverWait(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
			return secondsOrUnixTime(secs, now), true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(at.Sub(now), 0), true
		}
	}
	if v := h.Get("X-RateLimit-Reset"); v != "" {
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
			return secondsOrUnixTime(secs, now), true
		}
	}
	return 0, false
}

// secondsOrUnixTime reads n as a Unix time when it is past 2001 (no server asks to wait 31
// years), else as seconds.
func secondsOrUnixTime(n int64, now time.Time) time.Duration {
	if n >= 1_000_000_000 {
		return max(time.Unix(n, 0).Sub(now), 0)
	}
	return time.Duration(n) * time.Second
}

// execute sends a request, retrying as the policy says until it succeeds, fails for good,
// runs out of retries, or would retry after the retry timeout or the context's deadline. A
// request given up returns the last answer's error, with why it was given up.
func (c *Client) execute(ctx context.Context, method, url string, body any) (*resty.Response, error) {
	giveUpAt := time.Now().Add(c.retry.timeout)
	connectionFailures := 0
	// Every attempt of a POST carries the same key, so that the server runs it once however
	// many attempts reach it.
	var key string
	if method == http.MethodPost {
		key = newIdempotencyKey()
	}
	for attempt := 0; ; attempt++ {
		req := c.http.R().SetContext(ctx)
		if body != nil {
			req.SetHeader("Content-Type", "application/json").SetBody(body)
		}
		if key != "" {
			req.SetHeader(api.IdempotencyKeyHeader, key)
		}
		resp, err := req.Execute(method, url)
		if err != nil {
			err = fmt.Errorf("warren API: %s %s: %w", method, url, err)
		}
		if !retryable(method, key != "", resp, err) {
			return resp, err
		}
		last := err
		if last == nil {
			last = apiError(resp)
		}
		tries := attempt + 1
		// Cancelled while the answer arrived: the answer says "retry", the caller says stop.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (gave up after %s: %w)", last, attempts(tries), ctx.Err())
		}
		if err != nil {
			connectionFailures++
		}
		if (c.retry.maxRetries >= 0 && attempt >= c.retry.maxRetries) || connectionFailures > maxConnectionRetries {
			return nil, fmt.Errorf("%w (gave up after %s)", last, attempts(tries))
		}
		var header http.Header
		if resp != nil {
			header = resp.Header()
		}
		now := time.Now()
		wait := c.retry.wait(header, attempt, now)
		if now.Add(wait).After(giveUpAt) {
			return nil, fmt.Errorf("%w (gave up after %s, as a retry in %s would come after the %w of %s)", last, attempts(tries), wait.Round(100*time.Millisecond), ErrRetryTimeout, c.retry.timeout)
		}
		// Waiting past the context's deadline would only end in its error: stop now.
		if deadline, ok := ctx.Deadline(); ok && now.Add(wait).After(deadline) {
			return nil, fmt.Errorf("%w (gave up after %s, as a retry in %s would come after the deadline: %w)", last, attempts(tries), wait.Round(100*time.Millisecond), context.DeadlineExceeded)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("%w (gave up after %s: %w)", last, attempts(tries), ctx.Err())
		}
	}
}

// newIdempotencyKey returns a random key: 128 bits, in hex.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// attempts spells a count of attempts.
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}
