package apiserver

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// call is one request in flight: what every handler needs to answer it.
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	opID string
	who  principal // set by authentication on API routes
	log  *zap.Logger
	// errorCode is the error_code of the error response sent, for the access log.
	errorCode string
	// pattern is the route that answers ("GET /api_keys/{id}"), "" before the mux routes
	// the request or when no route matches.
	pattern string
	// endedSessions are agent sessions the handler deleted (with their credential); their
	// sockets on this replica are closed once the handler, and so its transaction, is done.
	endedSessions []string
	// readTx is the read transaction a GET is served in (inOneRead): the request's reads
	// (call.read) join it. held is the response written meanwhile, sent when it ends.
	readTx store.Tx
	held   *heldResponse
	// keyed is the POST's Idempotency-Key while its handler runs, when the handler answers
	// in its write transaction (idempotency.go): call.write records it there.
	keyed *keyedRequest
	// fault: a store transaction of the request failed with an internal error (not an API
	// error), whatever the handler then answered; such an answer is never recorded for an
	// Idempotency-Key's replay.
	fault bool
}

// handlerFunc answers a request or returns the error to send.
type handlerFunc func(c *call) error

type callKey struct{}

// statusRecorder remembers the status for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusRecorder) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap gives the WebSocket upgrade of agents the connection's Hijacker.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// outer wraps the whole mux: it gives every request an operation id, recovers panics,
// counts it in the metrics and writes one access log line: at error level for a 5xx, warn for a 429 or 503 (a client that should
// come back later), info otherwise; debug adds a line as the request starts. It never logs headers
// or bodies, so tokens cannot leak.
func (s *Server) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		c := &call{s: s, w: rec, r: r, opID: ids.New(ids.Operation)}
		c.log = s.log.With(zap.String("operation_id", c.opID))
		rec.Header().Set(api.OperationIDHeader, c.opID)
		c.log.Debug("request started", zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.String("remote_addr", r.RemoteAddr), zap.Int64("content_length", r.ContentLength))
		defer func() {
			if p := recover(); p != nil {
				c.log.Error("panic", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
				if rec.status == 0 {
					c.writeError(errors.New("panic"))
				}
			}
			fields := []zap.Field{
				zap.String("method", r.Method),
				zap.String("path", r.URL.Path),
				zap.Int("status", rec.status),
				zap.Int("bytes", rec.bytes),
				zap.Duration("duration", time.Since(start)),
				zap.String("principal_id", c.who.id),
			}
			if c.errorCode != "" {
				fields = append(fields, zap.String("error_code", c.errorCode))
			}
			c.log.Log(accessLevel(c.pattern, rec.status), "request", fields...)
			s.metrics.observeRequest(c.pattern, r.Method, rec.status, c.errorCode, time.Since(start))
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
	})
}

// accessLevel is the level of a request's access log line. A 503, like a 429, tells the
// client to come back: the cause is logged once where it is known (an outage of the store).
// A health check that succeeds is at debug: a load balancer asks every few seconds.
func accessLevel(pattern string, status int) zapcore.Level {
	switch {
	case healthChecks[pattern] && status < 300:
		return zapcore.DebugLevel
	case status == http.StatusServiceUnavailable, status == http.StatusTooManyRequests:
		return zapcore.WarnLevel
	case status >= 500:
		return zapcore.ErrorLevel
	}
	return zapcore.InfoLevel
}

// healthChecks are the route patterns of the health checks.
var healthChecks = map[string]bool{"GET /healthz": true, "GET /readyz": true}

// callOf returns the call that outer attached to the request, now holding the request as
// the mux passed it on (with its path values).
func callOf(r *http.Request) *call {
	c := r.Context().Value(callKey{}).(*call)
	c.r = r
	return c
}

// apiRoute wraps a handler of the public API: version header, authentication, the cap on
// simultaneous requests, rate limit, body checks, and on POST the Idempotency-Key (idempotency.go).
// o.answersInTx: a POST's handler gives its answer inside its write transaction.
func (s *Server) apiRoute(o op, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		if err := c.checkVersion(); err != nil {
			c.writeError(err)
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			c.inOneRead(func() { c.serveAPI(h, false) })
			return
		}
		c.serveAPI(h, o.answersInTx)
	})
}

// serveAPI authenticates the request, applies the cap on simultaneous requests, the rate
// limit and the body checks, and runs h (answersInTx: see op).
func (c *call) serveAPI(h handlerFunc, answersInTx bool) {
	r := c.r
	if err := c.authenticate(); err != nil {
		c.writeError(err)
		return
	}
	c.log = c.log.With(zap.String("account_id", c.who.accountID))
	leave, err := c.enterConcurrencyCap()
	if err != nil {
		c.writeError(err)
		return
	}
	defer leave()
	if err := c.checkRateLimit(); err != nil {
		c.writeError(err)
		return
	}
	if err := c.checkBody(); err != nil {
		c.writeError(err)
		return
	}
	run := func() {
		err := h(c)
		if err == nil {
			c.s.agents.End(c.endedSessions)
		}
		if err != nil {
			c.writeError(err)
		}
	}
	if r.Method != http.MethodPost {
		run()
		return
	}
	key, err := c.idempotencyKey()
	if err == nil && key != "" {
		err = c.idempotent(key, answersInTx, run)
	} else if err == nil {
		run()
	}
	if err != nil {
		c.writeError(err)
	}
}

// inOneRead serves a read-only request in one read transaction: authentication (the key,
// its owner, the account's api IP restriction) and the handler's own reads join it
// (call.read), so a GET costs one BEGIN/COMMIT, not one per step, and everything it
// answers comes from one snapshot. Nothing is cached across requests: every GET still reads
// its key from the database, so a deleted key stops working at once on every replica. The
// response is held until the transaction ends, so a slow client never holds a connection of
// the store's pool or its snapshot.
func (c *call) inOneRead(serve func()) {
	var held *heldResponse
	err := c.s.opts.Store.Read(c.r.Context(), func(tx store.Tx) error {
		c.readTx, c.held = tx, &heldResponse{}
		defer func() { held, c.readTx, c.held = c.held, nil, nil }()
		serve()
		return nil
	})
	if held != nil && held.status != 0 {
		if err != nil {
			// The answer was read: a failed COMMIT of a read-only transaction changes nothing.
			c.log.Warn("ending a read transaction", zap.Error(err))
		}
		c.send(held.status, held.body, held.json)
		return
	}
	if err != nil {
		c.writeError(err)
	}
}

// read runs fn in a read transaction of the request: the request's one read transaction
// when it is served in one (inOneRead), else a transaction of its own.
func (c *call) read(fn func(store.Tx) error) error {
	if c.readTx != nil {
		return fn(c.readTx)
	}
	return c.noteFault(c.s.opts.Store.Read(c.r.Context(), fn))
}

// write runs fn in a write transaction of the request. While a keyed POST's handler runs,
// the Idempotency-Key's record is written in that transaction (idempotentWrite).
func (c *call) write(fn func(store.Tx) error) error {
	ctx := c.r.Context()
	if k := c.keyed; k != nil && !k.recorded {
		err := c.s.opts.Store.Write(ctx, c.idempotentWrite(ctx, fn))
		c.keyWritten(err)
		return c.noteFault(err)
	}
	return c.noteFault(c.s.opts.Store.Write(ctx, fn))
}

// noteFault marks the request as faulted when err, the end of one of its transactions, is
// an internal error rather than an API error: whatever the handler then answers is not the
// request's own answer, and is never recorded for an Idempotency-Key's replay.
func (c *call) noteFault(err error) error {
	if _, known := apierr.From(err); err != nil && !known {
		c.fault = true
	}
	return err
}

// heldResponse is a response written inside inOneRead's transaction, sent after it ends.
type heldResponse struct {
	status int
	body   []byte
	json   bool
}

// adminRoute wraps an operator endpoint: off (404) unless an admin token is configured, and
// authenticated by that token.
func (s *Server) adminRoute(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := callOf(r)
		if s.opts.AdminToken == "" {
			c.writeError(pathNotFound(r))
			return
		}
		header, err := authorizationHeader(r)
		if err != nil {
			c.writeError(err)
			return
		}
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.AdminToken)) != 1 {
			c.writeError(apierr.Forbidden("ERR_203", "The admin token is missing or not valid."))
			return
		}
		if err := c.checkBody(); err != nil {
			c.writeError(err)
			return
		}
		if err := h(c); err != nil {
			c.writeError(err)
		}
	})
}

// checkVersion enforces the Service-Version header (details.md §2).
func (c *call) checkVersion() error {
	values := c.r.Header.Values(api.VersionHeader)
	switch {
	case len(values) == 0:
		return apierr.BadRequest("ERR_218", "No API version was given in the %s header. Supported versions: %s.", api.VersionHeader, api.Version)
	case len(values) > 1 || strings.TrimSpace(values[0]) != api.Version:
		given := strings.Join(values, ",")
		return apierr.WithDetail(apierr.BadRequest("ERR_217", "The API version %s is invalid or not supported. Supported versions: %s.", rules.Quote(given), api.Version), "version", rules.Clip(given))
	}
	return nil
}

// checkBody enforces the request body rules of details.md §1: no body on GET and DELETE, a
// JSON Content-Type on the others, and the size limit.
func (c *call) checkBody() error {
	r := c.r
	switch r.Method {
	case http.MethodGet, http.MethodDelete, http.MethodHead:
		if r.ContentLength > 0 || (r.ContentLength < 0 && hasBody(r)) {
			return apierr.BadRequest("ERR_211", "A %s request may not have a body.", r.Method)
		}
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		if r.ContentLength == 0 {
			return nil // an empty body stands for {}
		}
		return apierr.BadRequest("ERR_216", "The Content-Type header is missing; send 'application/json'.")
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return apierr.WithDetail(apierr.BadRequest("ERR_210", "The Content-Type %s is not supported; send 'application/json'.", rules.Quote(ct)), "content_type", rules.Clip(ct))
	}
	r.Body = http.MaxBytesReader(c.w, r.Body, c.s.opts.MaxBodyBytes)
	return nil
}

// hasBody peeks at a body of unknown length and keeps it readable.
func hasBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	var one [1]byte
	n, _ := r.Body.Read(one[:])
	if n == 0 {
		return false
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(strings.NewReader(string(one[:n])), r.Body), r.Body}
	return true
}

// encodeJSON marshals a response value. Unlike json.Marshal it keeps &, < and > as they
// are: responses are not HTML, and next_page_uri should read as a URL.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON sends a JSON response.
func (c *call) writeJSON(status int, v any) error {
	body, err := encodeJSON(v)
	if err != nil {
		return err
	}
	c.writeRaw(status, body)
	return nil
}

func (c *call) writeRaw(status int, body []byte) { c.send(status, body, true) }

// noContent answers 204 with an empty body.
func (c *call) noContent() error {
	c.send(http.StatusNoContent, nil, false)
	return nil
}

// send writes a response, or holds it while inOneRead's transaction is open. Like a
// ResponseWriter, the first status counts.
func (c *call) send(status int, body []byte, isJSON bool) {
	if c.held != nil {
		if c.held.status == 0 {
			*c.held = heldResponse{status: status, body: body, json: isJSON}
		}
		return
	}
	if isJSON {
		c.w.Header().Set("Content-Type", "application/json")
	}
	c.w.WriteHeader(status)
	if len(body) > 0 {
		_, _ = c.w.Write(body)
	}
}

// writeError renders err as the API's error body. Internal errors are logged (never the
// request's credentials) and answered with an opaque 500; an unreachable store is a 503
// with Retry-After, logged once per outage (outage.go).
func (c *call) writeError(err error) {
	e, known := apierr.From(err)
	switch {
	case c.s.outage.report(err, true):
		retryAfterStore(c.w.Header())
	case !known:
		c.log.Error("internal error", zap.Error(err))
	}
	if e.Details == nil {
		e.Details = map[string]string{}
	}
	c.errorCode = e.ErrorCode
	if _, isPath := e.Details["path"]; !isPath {
		e.Details["operation_id"] = c.opID
	}
	body, _ := encodeJSON(e)
	c.writeRaw(e.StatusCode, body)
}

// pathNotFound is the 404 of an unknown path or a wrong method (details.md §5.1).
func pathNotFound(r *http.Request) *api.Error {
	return &api.Error{StatusCode: http.StatusNotFound, Msg: "Not Found", Details: map[string]string{"path": rules.Clip(r.URL.Path)}}
}
