package edge

import (
	"net/http"
	"reflect"
)

// A route serves a request through its pipeline: each module it enables, compiled from its
// configuration into a step (one file per module, module_<name>.go), run in this fixed order.
//
// Request phase, outermost first (a step may answer the request itself and stop there):
//
//	compression (wraps the writer) → ip_restriction → user_agent_filter →
//	traffic_policy on_http_request → webhook_verification → oauth | oidc | saml →
//	request_headers → circuit_breaker → websocket_tcp_converter | the backend
//
// Response phase, on the upstream's answer (or a fixed http_response), in order:
//
//	response_headers → traffic_policy on_http_response
//
// TCP and TLS edges have one connection phase (connStep): ip_restriction, then
// traffic_policy on_tcp_connect, then the backend.
//
// The order puts the cheapest refusals first, authentication before anything that changes
// the request for the upstream, and the circuit breaker right around the upstream whose
// errors it counts.

// exchange is one request going through a route's pipeline.
type exchange struct {
	e *Edge
	v *visit
}

// refuse answers the request with an error page (errors.go): a step that stops a request.
func (x *exchange) refuse(w http.ResponseWriter, status int, code, format string, args ...any) {
	x.e.page(w, x.v, status, code, format, args...)
}

// handler is what a step hands a request on to.
type handler func(w http.ResponseWriter, r *http.Request, x *exchange)

// step is a module compiled into a route's request phase: it answers the request itself
// (refusing it, or serving a login) or calls next, possibly with a changed request or a
// wrapped writer.
type step interface {
	serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler)
}

// responseStep is a module compiled into a route's response phase: it changes the
// upstream's response (or the http_response backend's) before it is written.
type responseStep interface {
	modify(resp *http.Response, x *exchange) error
}

// stepFunc is a step that is just a function.
type stepFunc func(w http.ResponseWriter, r *http.Request, x *exchange, next handler)

func (f stepFunc) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	f(w, r, x, next)
}

// pipeline is a route's steps compiled in order (nil ones left out).
type pipeline struct {
	steps    []step
	response []responseStep
}

// add appends s to the request phase unless it is nil (a module that is off).
func (p *pipeline) add(s step) {
	if !isNil(s) {
		p.steps = append(p.steps, s)
	}
}

// addResponse appends s to the response phase unless it is nil.
func (p *pipeline) addResponse(s responseStep) {
	if !isNil(s) {
		p.response = append(p.response, s)
	}
}

// run passes the request through the steps from i on, then to last.
func (p *pipeline) run(w http.ResponseWriter, r *http.Request, x *exchange, last handler) {
	p.from(0, last)(w, r, x)
}

func (p *pipeline) from(i int, last handler) handler {
	if i == len(p.steps) {
		return last
	}
	return func(w http.ResponseWriter, r *http.Request, x *exchange) {
		p.steps[i].serve(w, r, x, p.from(i+1, last))
	}
}

// modify runs the response phase on resp.
func (p *pipeline) modify(resp *http.Response, x *exchange) error {
	for _, s := range p.response {
		if err := s.modify(resp, x); err != nil {
			return err
		}
	}
	return nil
}

// isNil is true for a nil interface and for an interface holding a nil pointer, which is
// what a compile function returns for a module that is off.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
