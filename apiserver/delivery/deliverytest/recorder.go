// Package deliverytest has local fakes of the event targets' HTTP APIs, for tests in this
// repository: each checks that a request really is what the target's client sends (the
// signature, token or key) and records the events it accepted.
package deliverytest

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Recorder is the part every fake shares: the event payloads it accepted, in arrival order,
// and failures to inject.
type Recorder struct {
	mu       sync.Mutex
	payloads []json.RawMessage
	failNext int
	down     bool
	changed  chan struct{} // closed and replaced on every accepted payload
}

func (r *Recorder) init() {
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
}

// Accept records accepted payloads; fakes call it once a request has passed their checks.
func (r *Recorder) Accept(payloads ...json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	r.payloads = append(r.payloads, payloads...)
	close(r.changed)
	r.changed = make(chan struct{})
}

// Refuse reports whether the fake must fail this request (FailNext, SetDown), counting it
// when it does. A fake calls it before anything else and answers 503 when it is true.
func (r *Recorder) Refuse() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return true
	}
	if r.failNext > 0 {
		r.failNext--
		return true
	}
	return false
}

// FailNext makes the next n requests fail with 503.
func (r *Recorder) FailNext(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failNext = n
}

// SetDown makes every request fail with 503 until SetDown(false).
func (r *Recorder) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// Payloads returns the payloads accepted so far.
func (r *Recorder) Payloads() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]json.RawMessage(nil), r.payloads...)
}

// WaitFor waits until at least n payloads were accepted and returns them. It fails the test
// when they have not come after a minute: a bound for a hung test, not a timing check.
func (r *Recorder) WaitFor(t testing.TB, n int) []json.RawMessage {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		r.mu.Lock()
		r.init()
		got, changed := len(r.payloads), r.changed
		r.mu.Unlock()
		if got >= n {
			return r.Payloads()
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the fake target accepted %d events, want %d", got, n)
		}
	}
}

// Unavailable answers a refused request the way the real services say "try again".
func Unavailable(w http.ResponseWriter) {
	http.Error(w, `{"message":"Service Unavailable"}`, http.StatusServiceUnavailable)
}
