package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// accountLimiter enforces the API's rate limit (details.md §1: 120 requests per account
// over 60 s) as a token bucket per account: a burst of the whole allowance, refilled evenly.
type accountLimiter struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
}

func newAccountLimiter(perMinute int) *accountLimiter {
	return &accountLimiter{perMinute: perMinute, buckets: map[string]*rate.Limiter{}}
}

// allow takes one request from the account's allowance, or says how long to wait.
func (l *accountLimiter) allow(accountID string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	b, found := l.buckets[accountID]
	if !found {
		b = rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)
		l.buckets[accountID] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		return false, delay
	}
	return true, 0
}

// checkRateLimit answers 429 ERR_226 with Retry-After when the caller's account is over its
// allowance. Off when Options.RateLimit is 0.
func (c *call) checkRateLimit() error {
	if c.s.limiter == nil {
		return nil
	}
	ok, wait := c.s.limiter.allow(c.who.accountID, time.Now())
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.w.Header().Set("Retry-After", strconv.Itoa(secs))
	return apiErr(http.StatusTooManyRequests, "ERR_226", "Rate limit exceeded: at most %d requests per 60 seconds per account. Retry in %d seconds.", c.s.limiter.perMinute, secs)
}
