package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// Only the request's own answers are replayed for an Idempotency-Key: not a server failure,
// nor a status that tells the client to come back.
func TestReplayable(t *testing.T) {
	for status, want := range map[int]bool{
		http.StatusOK: true, http.StatusCreated: true, http.StatusNoContent: true,
		http.StatusBadRequest: true, http.StatusForbidden: true, http.StatusNotFound: true, http.StatusUnprocessableEntity: true,
		http.StatusRequestTimeout: false, http.StatusConflict: false, http.StatusTooEarly: false, http.StatusTooManyRequests: false,
		http.StatusInternalServerError: false, http.StatusBadGateway: false, http.StatusServiceUnavailable: false, http.StatusGatewayTimeout: false,
	} {
		if got := replayable(status); got != want {
			t.Errorf("replayable(%d) = %v, want %v", status, got, want)
		}
	}
}

// onceStore runs every transaction once, on no database.
type onceStore struct{ store.Store }

func (onceStore) Read(_ context.Context, fn func(store.Tx) error) error  { return fn(nil) }
func (onceStore) Write(_ context.Context, fn func(store.Tx) error) error { return fn(nil) }

// A store transaction of a request (call.read, call.write) that ends in an internal error
// marks the request as faulted, whatever the handler answers next (so that answer is never
// recorded for replay); an API error, which is the request's own answer, does not.
func TestStoreFaultMarksTheCall(t *testing.T) {
	s := &Server{opts: Options{Store: onceStore{}}}
	for _, tc := range []struct {
		err   error
		fault bool
	}{
		{nil, false},
		{apierr.NotFound(), false},
		{apierr.BadRequest("ERR_5133", "The observability target needs an api_key."), false},
		{errors.New("disk on fire"), true},
	} {
		for op, run := range map[string]func(*call, func(store.Tx) error) error{"read": (*call).read, "write": (*call).write} {
			c := &call{s: s, r: httptest.NewRequest(http.MethodPost, "/ip_policies", nil), log: zap.NewNop()}
			if err := run(c, func(store.Tx) error { return tc.err }); err != tc.err {
				t.Fatalf("%s: %v, want %v", op, err, tc.err)
			}
			if c.fault != tc.fault {
				t.Errorf("%s ending in %v: fault %v, want %v", op, tc.err, c.fault, tc.fault)
			}
		}
	}
}
