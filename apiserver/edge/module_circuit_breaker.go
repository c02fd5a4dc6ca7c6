package edge

import (
	"errors"
	"net/http"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// circuitBreaker is a route's circuit_breaker step (github.com/sony/gobreaker/v2), right
// around the upstream: one breaker per route, guarding the route's backend as a whole.
//
// It counts, in a rolling window of rolling_window seconds kept in num_buckets buckets,
// the requests that went through it and their outcome: a failure is an answer of status
// 500 or more from below it (the upstream's own 5xx, and the edge's pages for an upstream
// that cannot be reached, fails or times out, or a backend with no tunnel online); any
// other answer is a success; a request whose visitor left before its answer counts as
// neither. When a request fails and the window holds at least volume_threshold finished
// requests of which at least error_threshold_percentage failed, the breaker opens: for
// tripped_duration seconds every request gets 503 ERR_8013 without reaching the upstream.
// Then it is half-open: one request goes through as a probe (the others meanwhile get
// 503 ERR_8013); if it succeeds the breaker closes with an empty window, if it fails it
// opens again.
//
// The breaker lives as long as the route's configuration that it depends on (its ID, its
// circuit_breaker module, its backend) stays the same: a snapshot rebuilt for any other
// change takes over the previous snapshot's breaker with its counts and state.
type circuitBreaker struct {
	cb *gobreaker.TwoStepCircuitBreaker[struct{}]
}

// breakerKey is what a breaker depends on.
type breakerKey struct {
	routeID, backendID string
	module             api.CircuitBreakerModule
}

// errVisitorGone is the outcome of a request whose visitor left: not counted.
var errVisitorGone = errors.New("the visitor left before the answer")

// errUpstreamFailed is the outcome of a request answered with a status of 500 or more.
var errUpstreamFailed = errors.New("the upstream failed")

// circuitBreaker compiles the circuit_breaker module of route; nil when off. The breaker
// is the previous snapshot's when its key is unchanged.
func (c *compiler) circuitBreaker(route *api.HTTPSEdgeRoute) *circuitBreaker {
	m := route.CircuitBreaker
	if m == nil || !m.Enabled {
		return nil
	}
	key := breakerKey{routeID: route.ID, module: *m}
	if b := route.Backend; b != nil && b.Enabled {
		key.backendID = b.Backend.ID
	}
	cb, ok := c.prevBreakers[key]
	if !ok {
		cb = newCircuitBreaker(*m, c.log.With(zap.String("route_id", route.ID)))
	}
	c.breakers[key] = cb
	return cb
}

func newCircuitBreaker(m api.CircuitBreakerModule, log *zap.Logger) *circuitBreaker {
	window, buckets := time.Duration(m.RollingWindow)*time.Second, time.Duration(max(m.NumBuckets, 1))
	return &circuitBreaker{cb: gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Interval: window,
		// Rounded up, so that the window is num_buckets buckets, not one more.
		BucketPeriod: (window + buckets - 1) / buckets,
		Timeout:      time.Duration(m.TrippedDuration) * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			done := int64(c.TotalSuccesses) + int64(c.TotalFailures)
			return done >= m.VolumeThreshold && float64(c.TotalFailures) >= m.ErrorThresholdPercentage*float64(done)
		},
		IsExcluded: func(err error) bool { return errors.Is(err, errVisitorGone) },
		OnStateChange: func(_ string, from, to gobreaker.State) {
			log.Info("edge: circuit breaker", zap.Stringer("from", from), zap.Stringer("to", to))
		},
	})}
}

func (b *circuitBreaker) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	done, err := b.cb.Allow()
	if err != nil {
		x.refuse(w, http.StatusServiceUnavailable, errCircuitOpen, "The route's circuit breaker is open: its upstream failed too often lately.")
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	next(sw, r, x)
	switch {
	case r.Context().Err() != nil:
		done(errVisitorGone)
	case sw.status >= 500:
		done(errUpstreamFailed)
	default:
		done(nil)
	}
}

// statusWriter notes the status of an answer; Unwrap lets http.ResponseController reach
// the connection (Flush, Hijack).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
