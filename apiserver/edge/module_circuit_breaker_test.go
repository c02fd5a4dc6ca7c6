package edge_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// flaky is an app that fails (500) while fail is set, and counts what reaches it.
type flaky struct {
	fail atomic.Bool
	hits atomic.Int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	f.hits.Add(1)
	if f.fail.Load() {
		http.Error(w, "app down", http.StatusInternalServerError)
		return
	}
	w.Write([]byte("ok"))
}

// breakerEnv is an env with a route whose circuit breaker is under test.
type breakerEnv struct {
	*env
	app     *flaky
	host    string
	edgeID  string
	routeID string
}

func newBreakerEnv(t *testing.T, breaker map[string]any) *breakerEnv {
	b := &breakerEnv{env: newEnv(t), app: &flaky{}, host: "cb.example.test"}
	b.edgeID, b.routeID = b.httpsEdge(b.host, b.handlerApp(b.app), map[string]any{"circuit_breaker": breaker})
	return b
}

// send sends one request and waits until the breaker counted it (or changed state).
func (b *breakerEnv) send(wantStatus int) {
	b.t.Helper()
	state, before := b.edge.BreakerState(b.routeID)
	status, body, _ := b.get(b.client(), "https://"+b.host+"/")
	if status != wantStatus {
		b.t.Fatalf("got %d %q, want %d", status, body, wantStatus)
	}
	b.waitBreaker(func(s string, n uint32) bool { return s != state || n > before }, "the request counted")
}

// refused checks that a request is refused by the open breaker without reaching the app.
func (b *breakerEnv) refused() {
	b.t.Helper()
	hits := b.app.hits.Load()
	b.expectPage(b.client(), "https://"+b.host+"/", http.StatusServiceUnavailable, "ERR_8013")
	if b.app.hits.Load() != hits {
		b.t.Fatal("a request reached the upstream while the breaker was open")
	}
}

// waitBreaker polls the breaker until ok holds (bounded: the test fails, never hangs).
func (b *breakerEnv) waitBreaker(ok func(state string, finished uint32) bool, what string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, n := b.edge.BreakerState(b.routeID)
		if ok(s, n) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waiting for %s: the breaker is %s with %d finished requests", what, s, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *breakerEnv) waitState(want string) {
	b.t.Helper()
	b.waitBreaker(func(s string, _ uint32) bool { return s == want }, want)
}

// TestCircuitBreakerTripsAndRecovers: the breaker trips when the window holds
// volume_threshold finished requests and the error share reaches the threshold; while open
// the upstream sees nothing (503 ERR_8013); after tripped_duration a failing probe opens it
// again and a succeeding one closes it.
func TestCircuitBreakerTripsAndRecovers(t *testing.T) {
	b := newBreakerEnv(t, map[string]any{"tripped_duration": 1, "rolling_window": 600, "num_buckets": 10,
		"volume_threshold": 4, "error_threshold_percentage": 0.5})
	for range 3 {
		b.send(200)
	}
	b.app.fail.Store(true)
	b.send(500) // 1 of 4 failed
	b.send(500) // 2 of 5
	if s, _ := b.edge.BreakerState(b.routeID); s != "closed" {
		t.Fatalf("tripped below the threshold: %s", s)
	}
	b.send(500) // 3 of 6: half, the threshold
	b.waitState("open")
	if b.app.hits.Load() != 6 {
		t.Fatalf("the upstream saw %d requests, want 6", b.app.hits.Load())
	}
	b.refused()

	b.waitState("half-open")
	b.send(500) // the probe fails
	b.waitState("open")
	b.refused()

	b.app.fail.Store(false)
	b.waitState("half-open")
	b.send(200) // the probe succeeds
	b.waitState("closed")
	b.send(200)
}

// TestCircuitBreakerSurvivesRebuild: a snapshot rebuilt for an unrelated change keeps the
// open breaker; a change of the circuit_breaker module gives the route a new one.
func TestCircuitBreakerSurvivesRebuild(t *testing.T) {
	b := newBreakerEnv(t, map[string]any{"tripped_duration": 3600, "volume_threshold": 1, "error_threshold_percentage": 0.5})
	b.app.fail.Store(true)
	b.send(500)
	b.waitState("open")
	rev := b.edge.Snapshot(t.Context()).Revision

	b.api("PATCH", "/edges/https/"+b.edgeID+"/routes/"+b.routeID, map[string]any{"description": "an unrelated change"})
	b.edgeWith("other.example.test", nil, b.fixed("other"), nil)
	b.refused()
	if b.edge.Snapshot(t.Context()).Revision == rev {
		t.Fatal("the snapshot was not rebuilt")
	}

	b.app.fail.Store(false)
	b.api("PUT", "/edges/https/"+b.edgeID+"/routes/"+b.routeID+"/circuit_breaker", map[string]any{"tripped_duration": 3599, "volume_threshold": 1, "error_threshold_percentage": 0.5})
	b.send(200)
	if s, _ := b.edge.BreakerState(b.routeID); s != "closed" {
		t.Fatalf("the changed module's breaker is %s", s)
	}
}
