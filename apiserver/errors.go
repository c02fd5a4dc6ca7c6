package apiserver

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// apiErr builds an error response. Handlers return it; writeError renders it with the
// request's operation id.
func apiErr(status int, code, format string, args ...any) *api.Error {
	return &api.Error{ErrorCode: code, StatusCode: status, Msg: fmt.Sprintf(format, args...), Details: map[string]string{}}
}

// badRequest is the common 400 with an error code.
func badRequest(code, format string, args ...any) *api.Error {
	return apiErr(http.StatusBadRequest, code, format, args...)
}

// forbidden is a 403: missing credentials and missing privileges.
func forbidden(code, format string, args ...any) *api.Error {
	return apiErr(http.StatusForbidden, code, format, args...)
}

// notFound is the exact body of details.md §5.1 for an unknown ID: no error code.
func notFound() *api.Error {
	return &api.Error{StatusCode: http.StatusNotFound, Msg: "Resource not found", Details: map[string]string{}}
}

// withDetail adds one detail to an error and returns it.
func withDetail(e *api.Error, key, value string) *api.Error {
	e.Details[key] = value
	return e
}

// asAPIError turns any error a handler returned into the error body to send: API errors as
// they are, rule violations as 400s with their code, an unreachable store as 503 ERR_251,
// anything else as an opaque 500.
func asAPIError(err error) (*api.Error, bool) {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae, true
	}
	var v *rules.Violation
	if errors.As(err, &v) {
		e := badRequest(v.Code, "%s", v.Msg)
		if v.Field != "" {
			e.Details["param"] = v.Field
		}
		return e, true
	}
	if errors.Is(err, store.ErrUnavailable) {
		return storeUnavailable(), true
	}
	return &api.Error{StatusCode: http.StatusInternalServerError, Msg: "internal server error", Details: map[string]string{}}, false
}
