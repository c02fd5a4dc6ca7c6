package edge

import (
	"crypto/tls"
	"crypto/x509"
)

// staticBackend dials a fixed address (host:port), over TLS when tls is set. The dial goes
// through the edge's guard (internal/netguard): a destination in the server's own networks
// is refused unless the operator allowed it.
type staticBackend struct {
	addr string
	tls  bool
}

func (b *staticBackend) plan(*planner) []upstream { return []upstream{{static: b}} }

// staticTLS is the client configuration of static backends over TLS (the name verified is
// the address's host).
func staticTLS(roots *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}
