package apiserver_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// scrape reads GET /metrics, without credentials, as Prometheus would.
func scrape(t *testing.T, c *tc) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(c.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.NewFormat(expfmt.TypeTextPlain))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			break
		}
		out[mf.GetName()] = &mf
	}
	if len(out) == 0 {
		t.Fatal("GET /metrics: no metric families")
	}
	return out
}

// series returns the metric of family name whose labels are exactly labels (name, value
// pairs), or nil.
func series(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	mf := fams[name]
	if mf == nil {
		return nil
	}
	for _, m := range mf.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)/2
		for i := 0; match && i+1 < len(labels); i += 2 {
			match = got[labels[i]] == labels[i+1]
		}
		if match {
			return m
		}
	}
	return nil
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.RateLimit = 2 })
	const missing = "ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
	c.ok(200, "GET", "/api_keys", nil)
	c.fails(404, "", "GET", "/api_keys/"+missing, nil)
	c.fails(429, "ERR_226", "GET", "/api_keys", nil)
	r := c.req("GET", "/no/such/path", nil)
	equal(t, "unknown path", r.status, 404)

	// The exact series: route patterns, never the raw path with its ID.
	err := testutil.ScrapeAndCompare(c.srv.URL+"/metrics", strings.NewReader(`
# HELP warren_http_requests_total HTTP requests answered, by route pattern, method and status.
# TYPE warren_http_requests_total counter
warren_http_requests_total{method="GET",pattern="/api_keys",status="200"} 1
warren_http_requests_total{method="GET",pattern="/api_keys",status="429"} 1
warren_http_requests_total{method="GET",pattern="/api_keys/{id}",status="404"} 1
warren_http_requests_total{method="GET",pattern="unmatched",status="404"} 1
# HELP warren_rate_limited_requests_total API requests refused with 429, by reason: rate (ERR_226, over the account's rate limit) or concurrency (ERR_225, too many at once).
# TYPE warren_rate_limited_requests_total counter
warren_rate_limited_requests_total{reason="concurrency"} 0
warren_rate_limited_requests_total{reason="rate"} 1
# HELP warren_store_write_retries_total Write transactions run again after a serialization failure or a deadlock.
# TYPE warren_store_write_retries_total counter
warren_store_write_retries_total 0
# HELP warren_event_outbox_pending Event deliveries waiting to be sent, in every account.
# TYPE warren_event_outbox_pending gauge
warren_event_outbox_pending 0
# HELP warren_agent_sessions Agent sessions connected to this replica.
# TYPE warren_agent_sessions gauge
warren_agent_sessions 0
`), "warren_http_requests_total", "warren_rate_limited_requests_total", "warren_store_write_retries_total",
		"warren_event_outbox_pending", "warren_agent_sessions")
	if err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, c)
	// The scrape above is counted once it is answered, under its own pattern.
	if m := series(fams, "warren_http_requests_total", "pattern", "/metrics", "method", "GET", "status", "200"); m.GetCounter().GetValue() != 1 {
		t.Fatalf("the first scrape: %v", m)
	}
	for pattern, want := range map[string]uint64{"/api_keys": 2, "/api_keys/{id}": 1, "unmatched": 1} {
		m := series(fams, "warren_http_request_duration_seconds", "method", "GET", "pattern", pattern)
		if got := m.GetHistogram().GetSampleCount(); got != want {
			t.Fatalf("latency samples of %s: %d, want %d", pattern, got, want)
		}
	}
	// The bootstrap wrote and every authenticated request read.
	for _, op := range []string{"read", "write"} {
		if m := series(fams, "warren_store_transaction_duration_seconds", "op", op); m.GetHistogram().GetSampleCount() == 0 {
			t.Fatalf("no store %s timed: %v", op, m)
		}
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if fams[name] == nil {
			t.Fatalf("%s is missing", name)
		}
	}
	for name, mf := range fams {
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), missing) || strings.Contains(l.GetValue(), c.srv.AccountID) {
					t.Fatalf("%s has an ID in label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

func TestMetricsCountDeliveriesByTargetKind(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c := newTC(t, withAWS(fake), fastRetries, func(o *apiserver.Options) { o.Events.GiveUpAfter = 100 * time.Millisecond })
	creds := map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}
	c.subscribe(dataStream(creds), "ip_policy_created.v0")
	// A Firehose destination whose target stays down until the event is too old to send.
	firehose := c.subscribe(map[string]any{"delivery_stream": map[string]any{"auth": creds,
		"delivery_stream_arn": "arn:aws:firehose:us-east-1:123456789012:deliverystream/audit"}}, "ip_policy_created.v0")
	fake.Firehose.SetDown(true)
	c.ok(201, "POST", "/ip_policies", map[string]any{})

	fake.Kinesis.WaitFor(t, 1)
	apiservertest.WaitUntil(t, "the firehose delivery failed", func() bool { return len(c.deliveries(firehose, "failed")) == 1 })
	apiservertest.WaitUntil(t, "both outcomes counted", func() bool {
		fams := scrape(t, c)
		return series(fams, "warren_event_deliveries_total", "outcome", "delivered", "target", "data_stream").GetCounter().GetValue() == 1 &&
			series(fams, "warren_event_deliveries_total", "outcome", "failed", "target", "delivery_stream").GetCounter().GetValue() == 1
	})
	fams := scrape(t, c)
	for _, m := range fams["warren_event_deliveries_total"].Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["target"] == "data_stream" && labels["outcome"] != "delivered" || labels["target"] == "delivery_stream" && labels["outcome"] == "delivered" {
			t.Fatalf("unexpected outcome: %v", labels)
		}
	}
	equal(t, "outbox depth", series(fams, "warren_event_outbox_pending").GetGauge().GetValue(), 0.0)
}

func TestMetricsOutboxDepth(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	clock := &testClock{}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock.set(t0)
	c := newTC(t, withAWS(fake), fastRetries, clock.configure)
	equal(t, "lag of an empty outbox", series(scrape(t, c), "warren_event_delivery_lag_seconds").GetGauge().GetValue(), 0.0)
	dest := c.subscribe(dataStream(map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}), "ip_policy_created.v0")
	fake.Kinesis.SetDown(true)
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	clock.set(t0.Add(30 * time.Second))
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	clock.set(t0.Add(90 * time.Second))
	apiservertest.WaitUntil(t, "a retried delivery counted", func() bool {
		return series(scrape(t, c), "warren_event_deliveries_total", "target", "data_stream", "outcome", "retried").GetCounter().GetValue() >= 1
	})
	equal(t, "pending deliveries", len(c.deliveries(dest, "pending")), 2)
	fams := scrape(t, c)
	equal(t, "outbox depth", series(fams, "warren_event_outbox_pending").GetGauge().GetValue(), 2.0)
	// The oldest pending delivery was created at t0: 90 seconds ago.
	equal(t, "delivery lag", series(fams, "warren_event_delivery_lag_seconds").GetGauge().GetValue(), 90.0)
}

func TestMetricsBuildInfo(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.Version = "1.2.3" })
	m := series(scrape(t, c), "warren_build_info", "version", "1.2.3", "go_version", runtime.Version())
	equal(t, "build info", m.GetGauge().GetValue(), 1.0)
}

// TestMetricsAgentRefusals: refused agent connections are counted by reason, every reason's
// series there from the start.
func TestMetricsAgentRefusals(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	connect := func(hdr ...string) int {
		t.Helper()
		req, err := c.request("GET", "/agent/connect", nil, hdr...)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	equal(t, "unknown token", connect("Authorization", "Bearer cr_unknown_secret"), 403)
	equal(t, "no token", connect("Authorization", ""), 403)
	equal(t, "no subprotocol", connect("Authorization", "Bearer "+token), 426)
	fams := scrape(t, c)
	for reason, want := range map[string]float64{"credential": 2, "protocol": 1, "ip_restriction": 0, "sessions": 0, "rate": 0, "unavailable": 0, "other": 0} {
		equal(t, reason, series(fams, "warren_agent_connections_refused_total", "reason", reason).GetCounter().GetValue(), want)
	}
}

func TestReadyz(t *testing.T) {
	c := newTC(t)
	noAuth := []string{"Authorization", "", "Service-Version", ""}
	r := c.req("GET", "/readyz", nil, noAuth...)
	equal(t, "ready", []any{r.status, r.raw}, []any{200, `{"status":"ok"}`})

	// A database that another binary rolled back one migration.
	write, _ := c.srv.Store.(*sqlstore.Store).DB()
	var newest, before int64
	if err := write.QueryRow("SELECT max(version_id) FROM goose_db_version").Scan(&newest); err != nil {
		t.Fatal(err)
	}
	if _, err := write.Exec("DELETE FROM goose_db_version WHERE version_id = ?", newest); err != nil {
		t.Fatal(err)
	}
	if err := write.QueryRow("SELECT max(version_id) FROM goose_db_version WHERE is_applied").Scan(&before); err != nil {
		t.Fatal(err)
	}
	r = c.req("GET", "/readyz", nil, noAuth...)
	equal(t, "behind on migrations", []any{r.status, r.raw}, []any{503, fmt.Sprintf(
		`{"failed":"migrations","msg":"The database schema is at version %d; this server needs version %d.","status":"unavailable"}`, before, newest)})

	if err := c.srv.Store.Close(); err != nil {
		t.Fatal(err)
	}
	r = c.req("GET", "/readyz", nil, noAuth...)
	equal(t, "store closed", []any{r.status, r.raw}, []any{503,
		`{"failed":"store","msg":"The store did not answer a read.","status":"unavailable"}`})
}

func TestMetricsAgentSessions(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	a := connectAgent(t, c.srv.URL, token)
	connectAgent(t, c.srv.URL, token)
	equal(t, "sessions", series(scrape(t, c), "warren_agent_sessions").GetGauge().GetValue(), 2.0)
	_ = a.ws.Close(websocket.StatusNormalClosure, "")
	// The closed WebSocket's request is counted once its handler returns, not timed: it
	// lasts as long as the agent stays.
	apiservertest.WaitUntil(t, "one session left, the other's request counted", func() bool {
		fams := scrape(t, c)
		return series(fams, "warren_agent_sessions").GetGauge().GetValue() == 1 &&
			series(fams, "warren_http_requests_total", "method", "GET", "pattern", "/agent/connect", "status", "101").GetCounter().GetValue() == 1
	})
	fams := scrape(t, c)
	equal(t, "timed", series(fams, "warren_http_request_duration_seconds", "method", "GET", "pattern", "/agent/connect"), (*dto.Metric)(nil))
}
