package apiserver

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// DefaultRateLimit is the rate limit of Options.RateLimit 0 and of --rate-limit's default:
// 6000 API requests per account per minute, with a burst of the whole allowance. A Terraform
// run makes about one request per resource and step (refresh, create, read back, destroy), so
// applying, planning and destroying a few hundred resources from several workspaces of one
// account stays well within it, while a runaway script is still held to 100 requests per
// second. details.md §1's 120 per 60 s remains a setting (--rate-limit 120).
const DefaultRateLimit = 6000

// DefaultMaxConcurrentRequests is the cap of Options.MaxConcurrentRequests 0 and of
// --max-concurrent-requests' default: requests of one account in flight at once in one
// process. Terraform's default parallelism is 10; 64 leaves room for several workspaces.
const DefaultMaxConcurrentRequests = 64

// The API rate limit is a token bucket per account: a burst of the whole allowance,
// refilled evenly over 60 s. The bucket lives in the store's RateBuckets when the store is
// shared by replicas (PostgreSQL), so that the allowance is the account's, not each
// replica's; in memory otherwise (SQLite: one process has the database).
//
// A shared bucket costs a round trip, so a replica takes a lease of tokens at once
// (rateLease: 1% of the allowance, one token at the spec's 120 per minute) and hands them
// out locally. Unused leased tokens lapse after the time the bucket takes to regain a lease.
// The trade-off, bounded: requests admitted in any window exceed the bucket's own bound by at
// most one lease in all (tokens taken just before the window, used in it), and an account
// may be refused while up to one lease per replica sits unused on other replicas.
type rateLimiter struct {
	scope     string // starts the keys of its buckets: "api:" + account ID
	perMinute int
	lease     int           // tokens taken from the bucket at once
	leaseTTL  time.Duration // how long leased tokens stay usable
	buckets   store.RateBuckets

	mu       sync.Mutex
	accounts map[string]*leasedTokens // by key: the account's ID for the API
}

// leasedTokens is what this process knows of a key's bucket.
type leasedTokens struct {
	mu      sync.Mutex // held across a take, so that one request per account refills at a time
	tokens  int        // taken from the bucket, not used yet
	expires time.Time  // when they lapse
	left    float64    // the bucket's tokens after the last take
	at      time.Time  // of the last take
}

// rateLease is the lease of a shared bucket for an allowance of perMinute.
func rateLease(perMinute int) int { return min(max(perMinute/100, 1), 100) }

func newRateLimiter(perMinute int, buckets store.RateBuckets, lease int) *rateLimiter {
	return &rateLimiter{
		scope: "api:", perMinute: perMinute, lease: lease, buckets: buckets,
		leaseTTL: time.Duration(lease) * time.Minute / time.Duration(perMinute),
		accounts: map[string]*leasedTokens{},
	}
}

// newAccountLimiter is the limiter of one process, on buckets in memory.
func newAccountLimiter(perMinute int) *rateLimiter {
	return newRateLimiter(perMinute, newMemoryBuckets(), 1)
}

// limiterOn is a limiter of perMinute per key of scope: on shared, the store's buckets when
// replicas share them (leased as rateLease says), else in this process's memory.
func limiterOn(scope string, perMinute int, shared store.RateBuckets) *rateLimiter {
	l := newAccountLimiter(perMinute)
	if shared != nil {
		l = newRateLimiter(perMinute, shared, rateLease(perMinute))
	}
	l.scope = scope
	return l
}

func (l *rateLimiter) bucket() store.Bucket { return store.Bucket{Size: l.perMinute, Per: time.Minute} }

// rateDecision is the outcome of one request against its account's allowance.
type rateDecision struct {
	allowed    bool
	remaining  int           // requests the account may still make at once
	reset      time.Duration // until the allowance is whole again
	retryAfter time.Duration // until the next request may pass (when refused)
	err        error         // taking from a shared bucket failed: the request passes
}

// allow takes one request from key's allowance (the account's, for the API) at now, or says
// how long to wait.
func (l *rateLimiter) allow(ctx context.Context, key string, now time.Time) rateDecision {
	l.mu.Lock()
	a, found := l.accounts[key]
	if !found {
		a = &leasedTokens{}
		l.accounts[key] = a
	}
	l.mu.Unlock()

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tokens > 0 && now.Before(a.expires) {
		a.tokens--
		return l.decide(true, a, now)
	}
	taken, left, err := l.buckets.Take(ctx, l.scope+key, l.lease, l.bucket(), now)
	if err != nil {
		// The limit protects the store; a store that cannot answer this fails the request's
		// own transaction anyway, so the request is not refused for it.
		d := l.decide(true, a, now)
		d.err = err
		return d
	}
	a.left, a.at, a.tokens = left, now, 0
	if taken == 0 {
		d := l.decide(false, a, now)
		d.retryAfter = l.toRegain(1 - left)
		return d
	}
	a.tokens, a.expires = taken-1, now.Add(l.leaseTTL)
	return l.decide(true, a, now)
}

// decide fills in what the headers tell: the bucket as last seen, refilled since, plus the
// tokens leased here. Other replicas' takes since show at the next take.
func (l *rateLimiter) decide(allowed bool, a *leasedTokens, now time.Time) rateDecision {
	size := float64(l.perMinute)
	est := size // never taken from: the bucket is full
	if !a.at.IsZero() {
		est = min(size, a.left+float64(max(now.Sub(a.at), 0))*size/float64(time.Minute))
	}
	est += float64(a.tokens)
	return rateDecision{allowed: allowed, remaining: max(int(math.Floor(est)), 0), reset: l.toRegain(size - est)}
}

// toRegain is how long the bucket takes to gain tokens.
func (l *rateLimiter) toRegain(tokens float64) time.Duration {
	return time.Duration(max(tokens, 0) * float64(time.Minute) / float64(l.perMinute))
}

// memoryBuckets are token buckets in this process's memory.
type memoryBuckets struct {
	mu sync.Mutex
	m  map[string]*memoryBucket
}

type memoryBucket struct {
	tokens float64
	at     time.Time
}

func newMemoryBuckets() *memoryBuckets { return &memoryBuckets{m: map[string]*memoryBucket{}} }

// Take implements store.RateBuckets with the arithmetic of the PostgreSQL statement.
func (m *memoryBuckets) Take(_ context.Context, key string, want int, b store.Bucket, now time.Time) (int, float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	size := float64(b.Size)
	bk, found := m.m[key]
	if !found {
		bk = &memoryBucket{tokens: size, at: now}
		m.m[key] = bk
	}
	tokens := min(size, bk.tokens+float64(max(now.Sub(bk.at), 0))*size/float64(b.Per))
	taken := min(want, int(math.Floor(tokens)))
	bk.tokens = tokens - float64(taken)
	if now.After(bk.at) {
		bk.at = now
	}
	return taken, bk.tokens, nil
}

// ceilSeconds rounds up to whole seconds, as the headers count: a client that waits that
// long is never early.
func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// The rate limit's response headers (and the OpenAPI document's).
const (
	rateLimitHeader     = "X-RateLimit-Limit"
	rateRemainingHeader = "X-RateLimit-Remaining"
	rateResetHeader     = "X-RateLimit-Reset"
	retryAfterHeader    = "Retry-After"
)

// checkRateLimit takes the request from the caller's account's allowance. Every answer
// under a limit carries X-RateLimit-Limit (requests per 60 s), X-RateLimit-Remaining and X-RateLimit-Reset
// (seconds until the allowance is whole again); over the allowance it is 429 ERR_226 with
// Retry-After (seconds until one more request may pass). Off, headers included (there is no allowance to tell), when Options.RateLimit < 0.
func (c *call) checkRateLimit() error {
	l := c.s.limiter
	if l == nil {
		return nil
	}
	d := l.allow(c.r.Context(), c.who.accountID, c.s.opts.Now())
	if d.err != nil {
		c.s.logStoreError(c.log, "rate limit: taking from the account's allowance failed; the request passes", d.err)
	}
	h := c.w.Header()
	h.Set(rateLimitHeader, strconv.Itoa(l.perMinute))
	h.Set(rateRemainingHeader, strconv.Itoa(d.remaining))
	h.Set(rateResetHeader, strconv.Itoa(ceilSeconds(d.reset)))
	if d.allowed {
		return nil
	}
	secs := ceilSeconds(d.retryAfter)
	h.Set(retryAfterHeader, strconv.Itoa(secs))
	return apierr.New(http.StatusTooManyRequests, "ERR_226", "Rate limit exceeded: at most %d requests per 60 seconds per account. Retry in %d seconds.", l.perMinute, secs)
}

// concurrencyCap bounds the requests of one account in flight at once in this process
// (details.md §1's separate cap, ERR_225). Per process: sharing it across replicas would
// cost two store round trips per request and leave counts behind when a replica dies, while
// a load balancer spreads an account's connections anyway.
type concurrencyCap struct {
	max      int
	mu       sync.Mutex
	inFlight map[string]int // by account; absent when 0
}

func newConcurrencyCap(max int) *concurrencyCap {
	return &concurrencyCap{max: max, inFlight: map[string]int{}}
}

// enter takes a slot of the account, or reports false when all are taken.
func (c *concurrencyCap) enter(accountID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight[accountID] >= c.max {
		return false
	}
	c.inFlight[accountID]++
	return true
}

// leave gives a slot back.
func (c *concurrencyCap) leave(accountID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight[accountID]--; c.inFlight[accountID] <= 0 {
		delete(c.inFlight, accountID)
	}
}

// enterConcurrencyCap takes one of the caller's account's slots for the request, or refuses
// it with 429 ERR_225. The caller runs the returned func when the request ends (deferred, so
// also when the handler panics). Off when Options.MaxConcurrentRequests < 0.
func (c *call) enterConcurrencyCap() (leave func(), err error) {
	cc := c.s.concurrency
	if cc == nil {
		return func() {}, nil
	}
	account := c.who.accountID
	if !cc.enter(account) {
		c.w.Header().Set(retryAfterHeader, "1")
		return nil, apierr.New(http.StatusTooManyRequests, "ERR_225", "Too many simultaneous API requests: at most %d at once per account. Retry when one of them has finished.", cc.max)
	}
	return func() { cc.leave(account) }, nil
}
