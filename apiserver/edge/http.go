package edge

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/netguard"
)

// serveHTTP answers one request of the HTTPS listener (terminated there) or of the HTTP
// listener. An HTTPS request is routed by its connection's SNI, which the TLS configuration
// (client certificates, minimum version) was chosen by; a Host that names another host is
// refused (421), so a request cannot reach an edge around its mutual TLS.
func (e *Edge) serveHTTP(w http.ResponseWriter, r *http.Request, scheme string) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	client, _ := netip.ParseAddrPort(r.RemoteAddr)
	v := &visit{scheme: scheme, client: client, start: start}
	if e.opts.MaxRequestBody > 0 {
		r.Body = http.MaxBytesReader(rec, r.Body, e.opts.MaxRequestBody)
	}
	body := &countingReader{r: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = body
	}
	defer func() {
		v.bytesIn = body.n
		e.finish(r, rec, v)
	}()
	session.StripHeaders(r.Header) // only the authentication modules set them
	host := hostname(r.Host)
	s := e.Snapshot(r.Context())
	port := "80"
	if scheme == "https" {
		port = "443"
		if sni := strings.ToLower(r.TLS.ServerName); sni != host {
			e.page(rec, v, http.StatusMisdirectedRequest, errMisdirected, "The host %q is not the TLS server name %q.", host, sni)
			return
		}
	}
	v.hostport = host + ":" + port
	if st := s.lookupSite(host); st != nil && st.https != nil && scheme == "https" {
		e.serveHTTPSEdge(rec, r, s, st.https, v)
		return
	}
	if t, ok := e.opts.Tunnels.Endpoint(scheme, v.hostport); ok {
		v.edgeID = "endpoint"
		if s.accountDisabled(t.AccountID) {
			e.page(rec, v, http.StatusForbidden, errAccountDisabled, "The account that serves this host is disabled.")
			return
		}
		if !e.endpointsAllowed(s, t.AccountID, v.client.Addr()) {
			e.page(rec, v, http.StatusForbidden, errIPRestricted, "The address %s is not allowed.", v.client.Addr())
			return
		}
		e.proxy(rec, r, &exchange{e: e, v: v}, []upstream{{tunnel: &t}}, nil)
		return
	}
	e.page(rec, v, http.StatusNotFound, errUnknownHost, "Nothing is served at %s.", host)
}

// visit is one request as the access log and the metrics see it.
type visit struct {
	scheme, hostport string
	client           netip.AddrPort
	start            time.Time
	edgeID, routeID  string
	account          string // the edge's account, for its traffic; "" for an agent endpoint
	code             string // the Warren error code of an error page, "" otherwise
	bytesIn          int64
	policyLog        map[string]any // what a traffic policy's log actions recorded
}

// proxyRequest is what the proxy's hooks need of one request (a context value).
type proxyRequest struct {
	visit     *visit
	exchange  *exchange // the same the request phase saw, for the response phase
	upstreams []upstream
	pipeline  *pipeline // the route's, for its response phase; nil for an agent endpoint
	// tunnels are the tunnels of upstreams by ID, for the stream header when one is dialed.
	tunnels map[string]*Tunnel
}

type proxyKey struct{}

// proxy sends r to the first of ups that takes it; the answer goes through p's response
// phase.
func (e *Edge) proxy(w http.ResponseWriter, r *http.Request, x *exchange, ups []upstream, p *pipeline) {
	v := x.v
	if len(ups) == 0 {
		e.page(w, v, http.StatusServiceUnavailable, errNoTunnel, "No tunnel is online for this address.")
		return
	}
	pr := &proxyRequest{visit: v, exchange: x, upstreams: ups, pipeline: p, tunnels: map[string]*Tunnel{}}
	for _, u := range ups {
		if u.tunnel != nil {
			pr.tunnels[u.tunnel.ID] = u.tunnel
		}
	}
	e.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), proxyKey{}, pr)))
}

func (e *Edge) reverseProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		// Rewrite starts from a request whose X-Forwarded-* and Forwarded headers
		// httputil removed: the edge sets its own, so a visitor cannot forge them.
		Rewrite: func(pr *httputil.ProxyRequest) {
			p := pr.In.Context().Value(proxyKey{}).(*proxyRequest)
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "upstream.invalid" // set per upstream by upstreamTransport
			pr.Out.Host = pr.In.Host
			h := pr.Out.Header
			h.Set("X-Forwarded-For", p.visit.client.Addr().String())
			h.Set("X-Forwarded-Proto", p.visit.scheme)
			h.Set("X-Forwarded-Host", pr.In.Host)
		},
		Transport: upstreamTransport{e},
		ModifyResponse: func(resp *http.Response) error {
			p := resp.Request.Context().Value(proxyKey{}).(*proxyRequest)
			if p.pipeline == nil {
				return nil
			}
			return p.pipeline.modify(resp, p.exchange)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			v := r.Context().Value(proxyKey{}).(*proxyRequest).visit
			var refused *netguard.RefusedError
			var ne net.Error
			switch {
			case errors.As(err, &refused):
				e.page(w, v, http.StatusBadGateway, errDestinationRefused, "The backend's destination is not allowed.")
			case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
				e.page(w, v, http.StatusGatewayTimeout, errUpstreamTimeout, "The upstream did not answer in time.")
			default:
				e.page(w, v, http.StatusBadGateway, errUpstream, "The upstream could not be reached or failed.")
			}
			e.log.Debug("edge: upstream error", zap.String("edge_id", v.edgeID), zap.String("route_id", v.routeID), zap.Error(err))
		},
		ErrorLog: zap.NewStdLog(e.log.Named("edge.proxy")),
	}
}

// upstreamTransport tries a request's upstreams in order: the next one when the connection
// to one cannot be made (nothing of the request was sent yet), an error otherwise.
type upstreamTransport struct{ e *Edge }

func (t upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := req.Context().Value(proxyKey{}).(*proxyRequest)
	body := req.Body
	var lastErr error
	for _, u := range p.upstreams {
		if u.response != nil {
			if body != nil {
				body.Close()
			}
			return u.response.asResponse(req), nil
		}
		attempt := req.Clone(req.Context())
		attempt.URL = new(url.URL)
		*attempt.URL = *req.URL
		if u.tunnel != nil {
			attempt.URL.Scheme, attempt.URL.Host = "http", u.tunnel.ID+tunnelHostSuffix
		} else {
			attempt.URL.Scheme, attempt.URL.Host = "http", u.static.addr
			if u.static.tls {
				attempt.URL.Scheme = "https"
			}
		}
		if body != nil && body != http.NoBody {
			attempt.Body = io.NopCloser(body) // the Transport closes it on error: keep the visitor's open for the next try
		}
		resp, err := t.e.transport.RoundTrip(attempt)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if _, ok := errors.AsType[*dialError](err); !ok {
			break
		}
	}
	if body != nil {
		body.Close()
	}
	return nil, lastErr
}

// tunnelHostSuffix makes the URL host by which the Transport pools the streams of a
// tunnel: "<tunnel ID>.tunnel.invalid".
const tunnelHostSuffix = ".tunnel.invalid"

// dialError is a connection to an upstream that could not be made: the request was not
// sent, and the next upstream may take it.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

func (e *Edge) newTransport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if id, ok := strings.CutSuffix(host, tunnelHostSuffix); ok {
				p, _ := ctx.Value(proxyKey{}).(*proxyRequest)
				if p == nil || p.tunnels[id] == nil {
					return nil, &dialError{errors.New("edge: a stream to a tunnel outside a request")}
				}
				t := p.tunnels[id]
				c, err := e.openStream(ctx, t, proto(t, "http"), p.visit.client, p.visit.hostport)
				if err != nil {
					return nil, &dialError{err}
				}
				return c, nil
			}
			c, err := e.dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, &dialError{err}
			}
			return c, nil
		},
		TLSClientConfig:        staticTLS(e.opts.StaticRootCAs),
		TLSHandshakeTimeout:    e.opts.HandshakeTimeout,
		ResponseHeaderTimeout:  e.opts.ResponseHeaderTimeout,
		IdleConnTimeout:        e.opts.IdleTimeout,
		MaxIdleConnsPerHost:    64,
		MaxResponseHeaderBytes: int64(e.opts.MaxHeaderBytes),
	}
}

// openStream opens a visitor stream to tunnel t, bounded by DialTimeout.
func (e *Edge) openStream(ctx context.Context, t *Tunnel, proto string, client netip.AddrPort, hostport string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.DialTimeout)
	defer cancel()
	return e.opts.Tunnels.OpenStream(ctx, t.ID, agentproto.StreamHeader{TunnelID: t.ID, Proto: proto, ClientAddr: client, Hostport: hostport})
}

// proto is the protocol of a stream to t: the tunnel's own, else def.
func proto(t *Tunnel, def string) string {
	if t.Proto != "" {
		return t.Proto
	}
	return def
}

// asResponse is the fixed response as an upstream's, so that it goes through the proxy's
// response path (the response_headers module, the access log) like any other.
func (b *httpResponseBackend) asResponse(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: b.status, Status: http.StatusText(b.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: b.header.Clone(), Body: io.NopCloser(strings.NewReader(b.body)), ContentLength: int64(len(b.body)), Request: req,
	}
}

// hostname is the lower-case host of a Host header, without its port.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(strings.TrimSuffix(hostport, "."))
}

// recorder records what a response was, for the access log and the metrics; Unwrap lets
// http.ResponseController reach the connection (Flush, Hijack for WebSocket upgrades).
type recorder struct {
	http.ResponseWriter
	status  int
	written int64
}

func (r *recorder) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	n, err := r.ResponseWriter.Write(p)
	r.written += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }
