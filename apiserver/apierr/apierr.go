// Package apierr builds the API's error answers (details.md §5): the error body every
// handler of the HTTP API, and the agent plane's handshake, return, and the one function that
// turns any error into the body to send.
package apierr

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// New builds an error answer. Handlers return it; the server renders it with the request's
// operation id.
func New(status int, code, format string, args ...any) *api.Error {
	return &api.Error{ErrorCode: code, StatusCode: status, Msg: fmt.Sprintf(format, args...), Details: map[string]string{}}
}

// BadRequest is the common 400 with an error code.
func BadRequest(code, format string, args ...any) *api.Error {
	return New(http.StatusBadRequest, code, format, args...)
}

// Forbidden is a 403: missing credentials and missing privileges.
func Forbidden(code, format string, args ...any) *api.Error {
	return New(http.StatusForbidden, code, format, args...)
}

// NotFound is the exact body of details.md §5.1 for an unknown ID: no error code.
func NotFound() *api.Error {
	return &api.Error{StatusCode: http.StatusNotFound, Msg: "Resource not found", Details: map[string]string{}}
}

// WithDetail adds one detail to an error and returns it.
func WithDetail(e *api.Error, key, value string) *api.Error {
	e.Details[key] = value
	return e
}

// StoreRetryAfter is the Retry-After of a 503 ERR_251, in seconds: a database restart
// takes seconds, a refused request costs the server no more than a failed connection
// attempt, and clients add their own random spread, so a short wait ends an apply's pause
// soon after the database is back.
const StoreRetryAfter = 1

// StoreUnavailable is the answer to a request the store could not serve now: it changed
// nothing the client can see, and the same request may pass after Retry-After.
func StoreUnavailable() *api.Error {
	return New(http.StatusServiceUnavailable, "ERR_251", "The database is not reachable right now. Retry in %d seconds.", StoreRetryAfter)
}

// From turns any error a handler returned into the error body to send: API errors as they
// are, rule violations as 400s with their code, an unreachable store as 503 ERR_251,
// anything else as an opaque 500 (known is false: the caller logs it).
func From(err error) (e *api.Error, known bool) {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae, true
	}
	var v *rules.Violation
	if errors.As(err, &v) {
		e := BadRequest(v.Code, "%s", v.Msg)
		if v.Field != "" {
			e.Details["param"] = v.Field
		}
		return e, true
	}
	if errors.Is(err, store.ErrUnavailable) {
		return StoreUnavailable(), true
	}
	return &api.Error{StatusCode: http.StatusInternalServerError, Msg: "internal server error", Details: map[string]string{}}, false
}
