package edge

import (
	"crypto/tls"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
)

// trafficPolicy is a traffic_policy module compiled (internal/trafficpolicy runs it): a
// route's on_http_request step and on_http_response step, or a TCP or TLS edge's
// on_tcp_connect step.
type trafficPolicy struct {
	policy *trafficpolicy.Policy
	owner  string // the route's or edge's ID: rate-limit buckets are per owner
	limits *trafficpolicy.Limits
	now    func() time.Time
	log    *zap.Logger
}

// trafficPolicy compiles the module of owner (rules.PolicyOwner…, ID id) with the rules
// the API checked it with; nil when off. notYet names an action this server does not run:
// the owner's traffic is refused rather than served without it.
func (c *compiler) trafficPolicy(owner, id string, m *api.TrafficPolicyModule) (tp *trafficPolicy, notYet string, err error) {
	if m == nil || !m.Enabled {
		return nil, "", nil
	}
	p, err := rules.CompileTrafficPolicy(m.Value, owner)
	if err != nil {
		return nil, "", err
	}
	if len(p.Unsupported) > 0 {
		return nil, "traffic_policy (" + p.Unsupported[0] + ")", nil
	}
	return &trafficPolicy{policy: p, owner: id, limits: c.limits, now: c.now, log: c.log}, "", nil
}

// has reports whether the policy has rules in phase (false when the module is off): a
// phase without rules adds no step.
func (tp *trafficPolicy) has(phase string) bool { return tp != nil && tp.policy.Has(phase) }

func (tp *trafficPolicy) exchange(conn trafficpolicy.Conn) *trafficpolicy.Exchange {
	return &trafficpolicy.Exchange{Conn: conn, Owner: tp.owner, Limits: tp.limits, Now: tp.now}
}

// httpConn is what a route's policy knows of the visitor's connection.
func httpConn(r *http.Request, v *visit) trafficpolicy.Conn {
	c := trafficpolicy.Conn{Client: v.client, Start: v.start, EndpointID: v.edgeID, Protocol: v.scheme}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		c.Server = clientAddr(a)
	}
	c.Host, c.Port = splitHostport(v.hostport)
	if r.TLS != nil {
		c.TLSVersion, c.SNI = trafficpolicy.TLSVersionName(r.TLS.Version), r.TLS.ServerName
	}
	return c
}

func splitHostport(hostport string) (string, int) {
	host, port, _ := net.SplitHostPort(hostport)
	n, _ := strconv.Atoi(port)
	return host, n
}

// policyRequest is the on_http_request step.
type policyRequest struct{ *trafficPolicy }

func (tp policyRequest) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	px := tp.exchange(httpConn(r, x.v))
	px.Req = r // url-rewrite and the header actions change it in place
	stop, err := tp.policy.Run(trafficpolicy.PhaseHTTPRequest, px)
	x.v.logPolicy(px.Log)
	if err != nil {
		tp.failed(x.v, err)
		x.refuse(w, http.StatusInternalServerError, errPolicyFailed, "The route's traffic policy failed to evaluate.")
		return
	}
	if stop == nil {
		next(w, r, x)
		return
	}
	switch stop.Kind {
	case trafficpolicy.Close:
		x.v.code = errPolicyClosed
		// net/http closes the connection without an answer, and does not log this panic.
		panic(http.ErrAbortHandler)
	case trafficpolicy.Respond:
		h := w.Header()
		for k, vs := range stop.Header {
			h[k] = vs
		}
		h.Set("Content-Length", strconv.Itoa(len(stop.Body)))
		w.WriteHeader(stop.Status)
		_, _ = io.WriteString(w, stop.Body)
	default:
		status, code, msg := stopPage(stop)
		if stop.Kind == trafficpolicy.Limited {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(stop.RetryAfter.Seconds()))))
		}
		x.refuse(w, status, code, "%s", msg)
	}
}

// stopPage is the error page of a refusing Stop: deny, restrict-ips, a tripped rate-limit.
func stopPage(stop *trafficpolicy.Stop) (status int, code, msg string) {
	if stop.Kind == trafficpolicy.Limited {
		return http.StatusTooManyRequests, errRateLimited, "Too many requests: " + stop.Reason + "."
	}
	return stop.Status, errPolicyDenied, "Refused by the route's traffic policy (" + stop.Action + ")."
}

func (tp *trafficPolicy) failed(v *visit, err error) {
	tp.log.Warn("edge: a traffic policy failed to evaluate; the request is refused",
		zap.String("edge_id", v.edgeID), zap.String("route_id", v.routeID), zap.Error(err))
}

// policyResponse is the on_http_response step: it changes the upstream's response, or
// replaces it (custom-response, redirect, deny; an evaluation error with a 500 page).
type policyResponse struct{ *trafficPolicy }

func (tp policyResponse) modify(resp *http.Response, x *exchange) error {
	px := tp.exchange(httpConn(resp.Request, x.v))
	px.Req, px.Res = resp.Request, resp
	stop, err := tp.policy.Run(trafficpolicy.PhaseHTTPResponse, px)
	x.v.logPolicy(px.Log)
	switch {
	case err != nil:
		tp.failed(x.v, err)
		x.v.code = errPolicyFailed
		h, body := pageContent(http.StatusInternalServerError, errPolicyFailed, "The route's traffic policy failed to evaluate.")
		replaceResponse(resp, http.StatusInternalServerError, h, body)
	case stop == nil:
	case stop.Kind == trafficpolicy.Respond:
		replaceResponse(resp, stop.Status, stop.Header, stop.Body)
	default:
		status, code, msg := stopPage(stop)
		x.v.code = code
		h, body := pageContent(status, code, msg)
		replaceResponse(resp, status, h, body)
	}
	return nil
}

// replaceResponse makes resp the answer status with header and body; the upstream's body
// is closed.
func replaceResponse(resp *http.Response, status int, header http.Header, body string) {
	resp.Body.Close()
	resp.StatusCode, resp.Status = status, strconv.Itoa(status)+" "+http.StatusText(status)
	resp.Header = header.Clone()
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	resp.Trailer, resp.TransferEncoding = nil, nil
}

// connPolicy is the on_tcp_connect step of a TCP or TLS edge: a connection refused (deny,
// restrict-ips, close-connection, an evaluation error) is closed.
type connPolicy struct{ *trafficPolicy }

func (tp connPolicy) allow(v *streamVisit) bool {
	c := trafficpolicy.Conn{Client: v.client, Server: v.server, Start: v.start, EndpointID: v.edgeID, Protocol: "tcp",
		TLSVersion: trafficpolicy.TLSVersionName(v.tlsOffered), SNI: v.sni}
	c.Host, c.Port = splitHostport(v.hostport)
	if v.sni != "" {
		c.Protocol = "tls"
	}
	px := tp.exchange(c)
	stop, err := tp.policy.Run(trafficpolicy.PhaseTCPConnect, px)
	v.policyLog = px.Log
	switch {
	case err != nil:
		tp.log.Warn("edge: a traffic policy failed to evaluate; the connection is closed",
			zap.String("edge_id", v.edgeID), zap.String("client_ip", v.client.Addr().String()), zap.Error(err))
		return false
	case stop != nil:
		tp.log.Info("edge stream refused by its traffic policy", zap.String("edge_id", v.edgeID),
			zap.String("client_ip", v.client.Addr().String()), zap.String("rule", stop.Where), zap.String("action", stop.Action))
		return false
	}
	return true
}

// highestVersion is the highest TLS version a ClientHello offers (GREASE values skipped).
func highestVersion(hello *tls.ClientHelloInfo) uint16 {
	var best uint16
	for _, v := range hello.SupportedVersions {
		if v >= tls.VersionTLS10 && v <= tls.VersionTLS13 && v > best {
			best = v
		}
	}
	return best
}

// logPolicy adds what the log actions recorded to the request's access line.
func (v *visit) logPolicy(m map[string]any) {
	if len(m) == 0 {
		return
	}
	if v.policyLog == nil {
		v.policyLog = map[string]any{}
	}
	for k, val := range m {
		v.policyLog[k] = val
	}
}
