package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultRateLimit is the rate limit of Options.RateLimit 0 and of --rate-limit's default:
// 6000 API requests per account per minute, with a burst of the whole allowance. A Terraform
// run makes about one request per resource and step (refresh, create, read back, destroy), so
// applying, planning and destroying a few hundred resources from several workspaces of one
// account stays well within it, while a runaway script is still held to 100 requests per
// second. details.md §1's 120 per 60 s remains a setting (--rate-limit 120).
const DefaultRateLimit = 6000

// accountLimiter enforces the API's rate limit as a token bucket per account: a burst of the
// whole allowance, refilled evenly over 60 s.
type accountLimiter struct {
	perMinute int
	mu        sync.Mutex // also makes taking a token and reading what is left one step
	buckets   map[string]*rate.Limiter
}

func newAccountLimiter(perMinute int) *accountLimiter {
	return &accountLimiter{perMinute: perMinute, buckets: map[string]*rate.Limiter{}}
}

// rateDecision is the outcome of one request against its account's allowance.
type rateDecision struct {
	allowed    bool
	remaining  int           // requests the account may still make at once
	reset      time.Duration // until the allowance is whole again
	retryAfter time.Duration // until the next request may pass (when refused)
}

// allow takes one request from the account's allowance at now, or says how long to wait.
func (l *accountLimiter) allow(accountID string, now time.Time) rateDecision {
	l.mu.Lock()
	defer l.mu.Unlock()
	perSecond := float64(l.perMinute) / 60
	b, found := l.buckets[accountID]
	if !found {
		b = rate.NewLimiter(rate.Limit(perSecond), l.perMinute)
		l.buckets[accountID] = b
	}
	d := rateDecision{allowed: true}
	r := b.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		d = rateDecision{retryAfter: delay}
	}
	tokens := b.TokensAt(now)
	d.remaining = max(int(math.Floor(tokens)), 0)
	d.reset = time.Duration((float64(l.perMinute) - tokens) / perSecond * float64(time.Second))
	return d
}

// ceilSeconds rounds up to whole seconds, as the headers count: a client that waits that
// long is never early.
func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// checkRateLimit takes the request from the caller's account's allowance. Every answer
// carries X-RateLimit-Limit (requests per 60 s), X-RateLimit-Remaining and X-RateLimit-Reset
// (seconds until the allowance is whole again); over the allowance it is 429 ERR_226 with
// Retry-After (seconds until one more request may pass). Off when Options.RateLimit < 0.
func (c *call) checkRateLimit() error {
	l := c.s.limiter
	if l == nil {
		return nil
	}
	d := l.allow(c.who.accountID, c.s.opts.Now())
	h := c.w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.perMinute))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(d.reset)))
	if d.allowed {
		return nil
	}
	secs := ceilSeconds(d.retryAfter)
	h.Set("Retry-After", strconv.Itoa(secs))
	return apiErr(http.StatusTooManyRequests, "ERR_226", "Rate limit exceeded: at most %d requests per 60 seconds per account. Retry in %d seconds.", l.perMinute, secs)
}
