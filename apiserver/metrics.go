package apiserver

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// metrics are the server's Prometheus series, on a registry of its own (not the global
// default one), so that many servers in one process keep theirs apart. Labels are bounded
// sets (route patterns, methods, statuses, target kinds): never IDs, paths or accounts.
type metrics struct {
	registry *prometheus.Registry

	requests        *prometheus.CounterVec   // pattern, method, status
	requestDuration *prometheus.HistogramVec // pattern, method
	storeDuration   *prometheus.HistogramVec // op: read or write
	storeRetries    prometheus.Counter
	storeDown       prometheus.Counter     // warren_store_unavailable_total (outage.go)
	rateLimited     *prometheus.CounterVec // reason
	deliveries      *prometheus.CounterVec // target, outcome
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"pattern", "method", "status"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method (agent WebSockets excluded).",
			Buckets: prometheus.DefBuckets,
		}, []string{"pattern", "method"}),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_store_transaction_duration_seconds",
			Help:    "Duration of a store transaction, retries included, by op (read or write).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"op"}),
		storeRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warren_store_write_retries_total",
			Help: "Write transactions run again after a serialization failure or a deadlock.",
		}),
		storeDown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warren_store_unavailable_total",
			Help: "Failures because the store could not be reached: API requests answered 503 ERR_251 and background work (event delivery, agent sessions, rate limit) that failed.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_rate_limited_requests_total",
			Help: "API requests refused with 429, by reason: rate (ERR_226, over the account's rate limit) or concurrency (ERR_225, too many at once).",
		}, []string{"reason"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_event_deliveries_total",
			Help: "Events sent to event destinations by target kind and outcome (delivered, retried, failed).",
		}, []string{"target", "outcome"}),
	}
	for _, reason := range limitReasons {
		m.rateLimited.WithLabelValues(reason) // both series from the start, at 0
	}
	m.registry.MustRegister(m.requests, m.requestDuration, m.storeDuration, m.storeRetries, m.storeDown, m.rateLimited, m.deliveries,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// register adds the build's series and those that read the server's state when scraped:
// the outbox's depth and lag (from the store) and this replica's agent sessions.
func (m *metrics) register(s *Server) {
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "warren_build_info",
		Help:        "Always 1; its labels tell the server's version and the Go version that built it.",
		ConstLabels: prometheus.Labels{"version": s.opts.Version, "go_version": runtime.Version()},
	})
	buildInfo.Set(1)
	m.registry.MustRegister(buildInfo, outboxCollector{s: s}, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "warren_agent_sessions",
		Help: "Agent sessions connected to this replica.",
	}, func() float64 { return float64(s.agents.Connected()) }))
}

// observeRequest counts one answered request. pattern is the route pattern the mux matched
// ("GET /api_keys/{id}"), without its method; "" when no route matched.
func (m *metrics) observeRequest(pattern, method string, status int, errorCode string, took time.Duration) {
	if _, path, found := strings.Cut(pattern, " "); found {
		pattern = path
	}
	if pattern == "" || pattern == "/" {
		pattern = "unmatched"
	}
	if !knownMethods[method] {
		method = "other" // a client chooses the method: keep the label's values bounded
	}
	m.requests.WithLabelValues(pattern, method, strconv.Itoa(status)).Inc()
	if status != http.StatusSwitchingProtocols { // an agent's WebSocket lasts as long as it stays connected
		m.requestDuration.WithLabelValues(pattern, method).Observe(took.Seconds())
	}
	if reason, limited := limitReasons[errorCode]; limited {
		m.rateLimited.WithLabelValues(reason).Inc()
	}
}

// limitReasons are the reason labels of warren_rate_limited_requests_total, by error code.
var limitReasons = map[string]string{"ERR_226": "rate", "ERR_225": "concurrency"}

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true,
}

// observeTx records one store transaction that ran attempts times.
func (m *metrics) observeTx(op string, took time.Duration, attempts int) {
	m.storeDuration.WithLabelValues(op).Observe(took.Seconds())
	if attempts > 1 {
		m.storeRetries.Add(float64(attempts - 1))
	}
}

// delivered counts the events of one delivery attempt to a target of kind.
func (m *metrics) delivered(kind, outcome string, events int) {
	if kind == "" {
		kind = "unknown" // the destination was deleted, or its target could not be read
	}
	m.deliveries.WithLabelValues(kind, outcome).Add(float64(events))
}

// outboxCollector reports the outbox's depth and lag: the pending deliveries of every
// account and the age of the oldest, read from the store in one query when scraped (so every
// replica reports the same shared numbers).
type outboxCollector struct{ s *Server }

var (
	outboxDepth = prometheus.NewDesc("warren_event_outbox_pending", "Event deliveries waiting to be sent, in every account.", nil, nil)
	outboxLag   = prometheus.NewDesc("warren_event_delivery_lag_seconds", "Age of the oldest event delivery waiting to be sent, in every account; 0 when none waits.", nil, nil)
)

func (o outboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- outboxDepth; ch <- outboxLag }

func (o outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, oldest, err := o.s.opts.Store.Pending(ctx)
	if err != nil {
		// Left out of this scrape rather than failing it: the other series still tell.
		if !o.s.outage.report(err, false) {
			o.s.log.Warn("metrics: counting pending event deliveries", zap.Error(err))
		}
		return
	}
	ch <- prometheus.MustNewConstMetric(outboxDepth, prometheus.GaugeValue, float64(n))
	lag := 0.0
	if !oldest.IsZero() {
		lag = max(0, o.s.opts.Now().Sub(oldest).Seconds()) // another replica's clock may be ahead
	}
	ch <- prometheus.MustNewConstMetric(outboxLag, prometheus.GaugeValue, lag)
}

// metricsHandler serves GET /metrics in Prometheus's text format, without API
// authentication (like /healthz): it tells request counts and timings, never an account,
// an ID or a secret.
func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(s.log)})
}

// readyz answers 200 {"status":"ok"} when the store answers a read and its schema is
// migrated to this binary's version, and 503 saying which failed otherwise: a load balancer
// sends traffic only to a replica whose store is there.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	c := callOf(r)
	err := s.opts.Store.Ready(r.Context())
	if err == nil {
		_ = c.writeJSON(http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	body := map[string]string{"status": "unavailable", "failed": "store", "msg": "The store did not answer a read."}
	if se, ok := errors.AsType[*store.SchemaError](err); ok {
		body["failed"], body["msg"] = "migrations", "The database schema is at version "+strconv.FormatInt(se.Have, 10)+"; this server needs version "+strconv.FormatInt(se.Want, 10)+"."
	}
	// The store's own error may name hosts or users: the log has it (an outage's once), the
	// body does not.
	if !s.outage.report(err, false) {
		c.log.Warn("not ready", zap.String("failed", body["failed"]), zap.Error(err))
	}
	_ = c.writeJSON(http.StatusServiceUnavailable, body)
}
