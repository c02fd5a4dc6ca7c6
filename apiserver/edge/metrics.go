package edge

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// metrics are the traffic plane's series. Their edge and route labels are IDs: bounded by the
// objects accounts create, and capped at Options.MaxMetricSeries pairs besides (traffic of
// the pairs beyond is counted under edge="other"), so that no visitor can add a series.
type metrics struct {
	requests *prometheus.CounterVec   // edge, route, class
	duration *prometheus.HistogramVec // edge, route
	bytes    *prometheus.CounterVec   // edge, route, direction (in: from visitors, out: to them)
	streams  *prometheus.CounterVec   // edge, outcome: TCP and TLS connections

	mu     sync.Mutex
	series map[[2]string]bool
	max    int
}

func newMetrics(reg prometheus.Registerer, max int) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_edge_requests_total",
			Help: "HTTP requests served by the edge, by edge, route and status class (2xx … 5xx).",
		}, []string{"edge", "route", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warren_edge_request_duration_seconds",
			Help:    "Time to serve an HTTP request through the edge, by edge and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"edge", "route"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_edge_bytes_total",
			Help: "Bytes through the edge, by edge, route and direction (in: from visitors; out: to them).",
		}, []string{"edge", "route", "direction"}),
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warren_edge_streams_total",
			Help: "TCP and TLS connections through the edge, by edge and outcome (served, refused, failed).",
		}, []string{"edge", "outcome"}),
		series: map[[2]string]bool{}, max: max,
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.bytes, m.streams)
	}
	return m
}

// labels are the edge and route labels of a pair, "other" beyond the cap.
func (m *metrics) labels(edge, route string) (string, string) {
	if edge == "" {
		edge = "none"
	}
	key := [2]string{edge, route}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.series[key] {
		if len(m.series) >= m.max {
			return "other", ""
		}
		m.series[key] = true
	}
	return edge, route
}

// finish records one request: metrics and the access line. The line never holds a header
// (cookies, Authorization) nor the query string (which may hold secrets).
func (e *Edge) finish(r *http.Request, rec *recorder, v *visit) {
	d := time.Since(v.start)
	edge, route := e.metrics.labels(v.edgeID, v.routeID)
	e.metrics.requests.WithLabelValues(edge, route, strconv.Itoa(rec.status/100)+"xx").Inc()
	e.metrics.duration.WithLabelValues(edge, route).Observe(d.Seconds())
	e.metrics.bytes.WithLabelValues(edge, route, "in").Add(float64(v.bytesIn))
	e.metrics.bytes.WithLabelValues(edge, route, "out").Add(float64(rec.written))
	e.opts.Traffic.Request(v.account, v.edgeID, v.routeID, rec.status, d, v.bytesIn, rec.written)
	fields := []zap.Field{
		zap.String("edge_id", v.edgeID), zap.String("route_id", v.routeID),
		zap.String("host", v.hostport), zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Int("status", rec.status), zap.Duration("duration", d),
		zap.Int64("bytes_in", v.bytesIn), zap.Int64("bytes_out", rec.written),
		zap.String("client_ip", v.client.Addr().String()),
	}
	if v.code != "" {
		fields = append(fields, zap.String("error_code", v.code))
	}
	if v.policyLog != nil {
		fields = append(fields, zap.Any("policy_log", v.policyLog))
	}
	e.log.Info("edge request", fields...)
}

// finishStream records one TCP or TLS connection of an account's edge.
func (e *Edge) finishStream(account, edgeID, outcome string, in, out int64) {
	e.opts.Traffic.Connection(account, edgeID, in, out)
	edge, _ := e.metrics.labels(edgeID, "")
	e.metrics.streams.WithLabelValues(edge, outcome).Inc()
	e.metrics.bytes.WithLabelValues(edge, "", "in").Add(float64(in))
	e.metrics.bytes.WithLabelValues(edge, "", "out").Add(float64(out))
}
