package trafficpolicy

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
)

// rateLimit counts requests per bucket (the values of bucket_key's expressions, one bucket
// for the route without them) with a sliding window of rate; a request beyond capacity is
// refused with 429. The counts are in memory, per edge replica (Limits): N replicas let up
// to N × capacity through.
type rateLimit struct {
	name     string
	capacity int
	rate     time.Duration
	keys     []cel.Program
}

// maxRate bounds a rate-limit's window (one day, as the public language's).
const maxRate = 24 * time.Hour

func parseRateLimit(phase string, config []byte) (Action, error) {
	var c struct {
		Name      string   `json:"name"`
		Algorithm string   `json:"algorithm"`
		Capacity  *int64   `json:"capacity"`
		Rate      string   `json:"rate"`
		BucketKey []string `json:"bucket_key"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	switch {
	case c.Name == "" || len(c.Name) > 1024:
		return nil, errors.New("rate-limit needs a name of at most 1024 bytes")
	case c.Algorithm != "sliding_window":
		return nil, fmt.Errorf("algorithm must be sliding_window; got %q", c.Algorithm)
	case c.Capacity == nil || *c.Capacity < 1 || *c.Capacity > 2_000_000_000:
		return nil, errors.New("capacity must be a whole number from 1 to 2000000000")
	}
	rate, err := time.ParseDuration(c.Rate)
	if err != nil || rate < time.Second || rate > maxRate {
		return nil, fmt.Errorf("rate must be a duration from 1s to 24h (like \"60s\"); got %q", c.Rate)
	}
	a := rateLimit{name: c.Name, capacity: int(*c.Capacity), rate: rate}
	env, err := Env(phase)
	if err != nil {
		return nil, err
	}
	for i, src := range c.BucketKey {
		checked, iss := env.Compile(src)
		if iss != nil && iss.Err() != nil {
			return nil, fmt.Errorf("bucket_key %d %q does not compile: %s", i+1, src, strings.TrimSpace(iss.Errors()[0].Message))
		}
		prg, err := env.Program(checked)
		if err != nil {
			return nil, err
		}
		a.keys = append(a.keys, prg)
	}
	return a, nil
}

func (rateLimit) Type() string { return "rate-limit" }
func (a rateLimit) run(x *Exchange) (*Stop, error) {
	if x.Limits == nil {
		return nil, errors.New("no rate limit store")
	}
	var key strings.Builder
	fmt.Fprintf(&key, "%s\x00%s\x00%d\x00%s", x.Owner, a.name, a.capacity, a.rate)
	for i, prg := range a.keys {
		v, _, err := prg.Eval(x.variables())
		if err != nil {
			return nil, fmt.Errorf("bucket_key %d: %w", i+1, err)
		}
		fmt.Fprintf(&key, "\x00%v", v.Value())
	}
	ok, retry := x.Limits.take(key.String(), a.capacity, a.rate, x.now())
	if ok {
		return nil, nil
	}
	return &Stop{Kind: Limited, Status: http.StatusTooManyRequests, RetryAfter: retry,
		Reason: fmt.Sprintf("the rate limit %q (%d per %s) is exceeded", a.name, a.capacity, a.rate)}, nil
}

// Limits are the rate-limit buckets of an edge replica, kept across routing snapshots (a
// bucket is keyed by its owner, the action's name, capacity and rate, and the bucket key's
// values: a changed configuration starts afresh).
type Limits struct {
	mu      sync.Mutex
	windows map[string]*window
	sweepAt int
}

// NewLimits returns an empty store.
func NewLimits() *Limits { return &Limits{windows: map[string]*window{}, sweepAt: 1024} }

// window is a bucket's sliding window: the counts of the current fixed window (starting at
// start) and of the one before; the count in the sliding window is prev weighted by the
// share of it still inside, plus cur.
type window struct {
	start     time.Time
	rate      time.Duration
	prev, cur int
}

func (w *window) advance(now time.Time) {
	if n := now.Sub(w.start) / w.rate; n > 0 {
		w.prev = w.cur
		if n > 1 {
			w.prev = 0
		}
		w.cur = 0
		w.start = w.start.Add(n * w.rate)
	}
}

// take counts one request in the bucket key; it refuses one that would exceed capacity,
// with the time until the current fixed window ends.
func (l *Limits) take(key string, capacity int, rate time.Duration, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil {
		l.sweep(now)
		w = &window{start: now.Truncate(rate), rate: rate}
		l.windows[key] = w
	}
	w.advance(now)
	inPrev := float64(w.prev) * float64(w.rate-now.Sub(w.start)) / float64(w.rate)
	if inPrev+float64(w.cur) >= float64(capacity) {
		return false, w.start.Add(w.rate).Sub(now)
	}
	w.cur++
	return true, 0
}

// sweep drops the buckets nothing was counted in for two windows, when there are many.
func (l *Limits) sweep(now time.Time) {
	if len(l.windows) < l.sweepAt {
		return
	}
	for k, w := range l.windows {
		if now.Sub(w.start) >= 2*w.rate {
			delete(l.windows, k)
		}
	}
	l.sweepAt = max(1024, 2*len(l.windows))
}
