package edge

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// tlsEdge is a TLS edge compiled: it terminates TLS with the names' certificates and sends
// the plaintext stream to its backend, or (tls_termination terminate_at: upstream) passes
// the whole TLS stream through, ClientHello included.
type tlsEdge struct {
	compiled
	hosts       []string
	passthrough bool
	tls         tlsModules
	ips         *ipSet
	notYet      string
	backend     backend
}

func (c *compiler) tlsEdge(o *store.Object) *tlsEdge {
	e := &tlsEdge{compiled: compiled{id: o.ID, accountID: o.AccountID}}
	var doc api.TLSEdge
	err := json.Unmarshal(o.Doc, &doc)
	if err == nil {
		e.hosts = hostsOf(doc.Hostports)
		e.passthrough = doc.TLSTermination != nil && doc.TLSTermination.Enabled && doc.TLSTermination.TerminateAt == "upstream"
		e.notYet = trafficPolicyNotYet(doc.TrafficPolicy)
		if e.tls, err = c.tlsModules(o.AccountID, doc.TLSTermination, doc.MutualTLS); err == nil {
			if e.ips, err = c.ipRestriction(o.AccountID, doc.IPRestriction); err == nil {
				e.backend, err = c.backendModule(o.AccountID, doc.Backend)
			}
		}
	}
	if err != nil {
		e.err = err
		c.logErr(o.Kind, o.ID, err)
	}
	return e
}

// serveTLSEdge serves one connection of a TLS edge; conn replays the ClientHello.
func (e *Edge) serveTLSEdge(s *Snapshot, conn net.Conn, edge *tlsEdge, host string) {
	v := streamVisit{edgeID: edge.id, hostport: host + ":443", client: clientAddr(conn.RemoteAddr()), proto: "tls"}
	if !e.streamAllowed(s, &edge.compiled, edge.notYet, edge.ips, edge.backend, v) {
		conn.Close()
		return
	}
	if !edge.passthrough {
		cert := s.certificate(host)
		if cert == nil {
			conn.Close()
			return
		}
		tc := tls.Server(conn, edge.tls.config(cert))
		ctx, cancel := context.WithTimeout(e.closeCtx, e.opts.HandshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			e.finishStream(edge.id, "refused", 0, 0)
			conn.Close()
			return
		}
		conn, v.proto = tc, "tcp"
	}
	_ = conn.SetDeadline(time.Time{})
	e.serveStream(conn, v, edge.backend.plan(e.planner()))
}

// streamAllowed applies what a TCP or TLS edge checks before it connects a stream; a
// refused stream is counted and closed by the caller (a raw stream has no page to show).
func (e *Edge) streamAllowed(s *Snapshot, c *compiled, notYet string, ips *ipSet, b backend, v streamVisit) bool {
	ip := v.client.Addr()
	ok := c.err == nil && notYet == "" && b != nil && (ips == nil || ips.allowed(ip)) && e.endpointsAllowed(s, c.accountID, ip)
	if !ok {
		e.finishStream(c.id, "refused", 0, 0)
	}
	return ok
}
