package edge

import (
	"crypto/tls"
	"crypto/x509"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"net/http"
	"net/netip"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// ipSet is the rules of an ip_restriction module's policies, or of an account restriction's.
type ipSet struct{ rules []rules.IPRule }

func (s *ipSet) allowed(ip netip.Addr) bool { return rules.IPAllowed(s.rules, ip) }

// allow is the ip_restriction step of a TCP or TLS edge.
func (s *ipSet) allow(v *streamVisit) bool { return s.allowed(v.client.Addr()) }

// serve is the ip_restriction step of a route.
func (s *ipSet) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	if ip := x.v.client.Addr(); !s.allowed(ip) {
		x.refuse(w, http.StatusForbidden, errIPRestricted, "The address %s is not allowed by the route's IP restriction.", ip)
		return
	}
	next(w, r, x)
}

// ipRestriction compiles an ip_restriction module; nil when off.
func (c *compiler) ipRestriction(account string, m *api.IPRestrictionModule) (*ipSet, error) {
	if m == nil || !m.Enabled {
		return nil, nil
	}
	return c.ipSet(account, api.RefIDs(m.IPPolicies))
}

// headerEdit is a request_headers or response_headers module: headers removed, then set.
type headerEdit struct {
	remove []string
	add    http.Header
}

// requestHeaders is the request_headers step: it edits the request the upstream receives.
// The edge's own X-Forwarded-* headers are set after it (http.go) and cannot be edited.
type requestHeaders struct{ *headerEdit }

func (h requestHeaders) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	h.apply(r.Header)
	next(w, r, x)
}

// responseHeaders is the response_headers step.
type responseHeaders struct{ *headerEdit }

func (h responseHeaders) modify(resp *http.Response, _ *exchange) error {
	h.apply(resp.Header)
	return nil
}

func compileHeaders(m *api.HeadersModule) *headerEdit {
	if m == nil || !m.Enabled {
		return nil
	}
	e := &headerEdit{remove: m.Remove, add: http.Header{}}
	for k, v := range m.Add {
		e.add.Set(k, v)
	}
	return e
}

func (e *headerEdit) apply(h http.Header) {
	if e == nil {
		return
	}
	for _, k := range e.remove {
		h.Del(k)
	}
	for k, v := range e.add {
		h[k] = v
	}
}

// tlsModules are what the tls_termination and mutual_tls modules of an edge set on its
// TLS configuration.
type tlsModules struct {
	minVersion uint16
	clientCAs  *x509.CertPool // nil: no client certificate asked for
}

func (c *compiler) tlsModules(account string, term *api.TLSTerminationModule, mtls *api.MutualTLSModule) (tlsModules, error) {
	var m tlsModules
	var err error
	var min *string
	if term != nil && term.Enabled {
		min = term.MinVersion
	}
	if m.minVersion, err = tlsVersion(min); err != nil {
		return m, err
	}
	if mtls != nil && mtls.Enabled {
		if m.clientCAs, err = c.caPool(account, api.RefIDs(mtls.CertificateAuthorities)); err != nil {
			return m, err
		}
	}
	return m, nil
}

// config is the TLS configuration that terminates a connection to a host of the edge with
// cert; nextProtos are the application protocols offered.
func (m tlsModules) config(cert *tls.Certificate, nextProtos ...string) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: m.minVersion, NextProtos: nextProtos}
	if m.clientCAs != nil {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, m.clientCAs
	}
	return cfg
}
