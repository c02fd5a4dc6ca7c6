package apiserver

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// outage follows the store being unreachable (store.ErrUnavailable): the first failure of
// an outage logs one error line with its cause, later ones are only counted
// (warren_store_unavailable_total), and the first transaction that starts after the outage
// began and succeeds ends it with one info line: how long it lasted, how many requests were
// refused. Requests and background work (event delivery, agent sessions, the rate limit)
// report to it alike, so an outage is one error line, not one per request or per poll.
type outage struct {
	log      *zap.Logger
	failures prometheus.Counter

	down    atomic.Bool // read on every transaction: the common case takes no lock
	mu      sync.Mutex
	since   time.Time // when the outage began (monotonic)
	refused int       // requests answered 503 in it
	failed  int       // failures reported in it, requests included
}

func newOutage(log *zap.Logger, failures prometheus.Counter) *outage {
	return &outage{log: log, failures: failures}
}

// report counts err when it is a store outage and says whether it was; request: err is the
// answer of an API request (a 503).
func (o *outage) report(err error, request bool) bool {
	if !errors.Is(err, store.ErrUnavailable) {
		return false
	}
	o.failures.Inc()
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down.Load() {
		o.since, o.refused, o.failed = time.Now(), 0, 0
		o.down.Store(true)
		// The cause names the host and user, never a password (pgconn leaves it out).
		o.log.Error("store unavailable: answering 503 until it is back", zap.Error(err))
	}
	o.failed++
	if request {
		o.refused++
	}
	return true
}

// answered notes a store transaction that started at start and succeeded. One that started
// before the outage began proves nothing about the store now.
func (o *outage) answered(start time.Time) {
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.down.Load() || start.Before(o.since) {
		return
	}
	o.down.Store(false)
	o.log.Info("store available again", zap.Duration("outage", time.Since(o.since)),
		zap.Int("refused_requests", o.refused), zap.Int("failures", o.failed))
}

// logStoreError logs a failure of background work as msg, unless the store is unavailable:
// the outage's one line tells that.
func (s *Server) logStoreError(log *zap.Logger, msg string, err error, fields ...zap.Field) {
	if s.outage.report(err, false) {
		return
	}
	log.Error(msg, append(fields, zap.Error(err))...)
}

// retryAfterStore sets the Retry-After of a 503 ERR_251.
func retryAfterStore(h http.Header) { h.Set(retryAfterHeader, strconv.Itoa(apierr.StoreRetryAfter)) }
