package edge

import (
	"crypto/tls"
	"net"
	"net/http"
	"slices"
)

// ManagedCertificates are the certificates an ACME client obtains for reserved domains that
// have a certificate management policy, and its answers to the authority's challenges.
type ManagedCertificates interface {
	// Certificate returns the managed certificate of host, nil when there is none yet.
	Certificate(host string) *tls.Certificate
	// ChallengeCertificate returns the TLS-ALPN-01 certificate for a validation's hello,
	// nil when no challenge for its name is under way.
	ChallengeCertificate(hello *tls.ClientHelloInfo) *tls.Certificate
	// HandleHTTPChallenge answers r when it is an HTTP-01 validation, and reports whether
	// it was one.
	HandleHTTPChallenge(w http.ResponseWriter, r *http.Request) bool
}

// acmeTLSALPN is the protocol a TLS-ALPN-01 validation offers, alone (RFC 8737).
const acmeTLSALPN = "acme-tls/1"

// certificate is the certificate host is served with: its uploaded one, else its managed one
// while the snapshot has its policy (the ACME client forgets a domain released or no longer
// managed only at its next sync).
func (e *Edge) certificate(s *Snapshot, host string) *tls.Certificate {
	if cert := s.certificate(host); cert != nil || e.opts.Managed == nil || !s.isManaged(host) {
		return cert
	}
	return e.opts.Managed.Certificate(host)
}

// serveALPNChallenge completes a TLS-ALPN-01 validation's handshake with the challenge
// certificate, and reports whether hello was one (conn is then closed).
func (e *Edge) serveALPNChallenge(conn net.Conn, hello *tls.ClientHelloInfo) bool {
	if e.opts.Managed == nil || !slices.Contains(hello.SupportedProtos, acmeTLSALPN) {
		return false
	}
	// The hello was read off a stand-in connection (readClientHello): give it the real one.
	h := *hello
	h.Conn = conn
	cert := e.opts.Managed.ChallengeCertificate(&h)
	if cert == nil {
		return false
	}
	defer conn.Close()
	// The validator reads the certificate from the handshake and sends nothing after it.
	_ = tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{acmeTLSALPN}}).Handshake()
	return true
}
