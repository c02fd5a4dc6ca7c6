package edge

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
	"strings"
)

// tlsEdge is a TLS edge compiled: it terminates TLS with the names' certificates and sends
// the plaintext stream to its backend, or (tls_termination terminate_at: upstream) passes
// the whole TLS stream through, ClientHello included.
type tlsEdge struct {
	streamEdge
	hosts       []string
	passthrough bool
	tls         tlsModules
}

func (c *compiler) tlsEdge(o *store.Object) *tlsEdge {
	e := &tlsEdge{streamEdge: streamEdge{compiled: compiled{id: o.ID, accountID: o.AccountID}}}
	var doc api.TLSEdge
	err := json.Unmarshal(o.Doc, &doc)
	if err == nil {
		e.hosts = hostsOf(doc.Hostports)
		e.passthrough = doc.TLSTermination != nil && doc.TLSTermination.Enabled && doc.TLSTermination.TerminateAt == "upstream"
		if e.tls, err = c.tlsModules(o.AccountID, doc.TLSTermination, doc.MutualTLS); err == nil {
			err = c.streamModules(&e.streamEdge, rules.PolicyOwnerTLSEdge, doc.TrafficPolicy, doc.IPRestriction, doc.Backend)
		}
	}
	if err != nil {
		e.err = err
		c.logErr(o.Kind, o.ID, err)
	}
	return e
}

// serveTLSEdge serves one connection of a TLS edge; conn replays the ClientHello.
func (e *Edge) serveTLSEdge(s *Snapshot, conn net.Conn, edge *tlsEdge, hello *tls.ClientHelloInfo) {
	host := strings.ToLower(hello.ServerName)
	v := streamVisit{edgeID: edge.id, account: edge.accountID, hostport: host + ":443", client: clientAddr(conn.RemoteAddr()), proto: "tls",
		server: clientAddr(conn.LocalAddr()), start: time.Now(), sni: host, tlsOffered: highestVersion(hello)}
	if !e.streamAllowed(s, &edge.streamEdge, &v) {
		conn.Close()
		return
	}
	if !edge.passthrough {
		cert := e.certificate(s, host)
		if cert == nil {
			conn.Close()
			return
		}
		tc := tls.Server(conn, edge.tls.config(cert))
		ctx, cancel := context.WithTimeout(e.closeCtx, e.opts.HandshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			e.finishStream(edge.accountID, edge.id, "refused", 0, 0)
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
func (e *Edge) streamAllowed(s *Snapshot, se *streamEdge, v *streamVisit) bool {
	ip := v.client.Addr()
	ok := se.err == nil && se.notYet == "" && se.backend != nil && !s.accountDisabled(se.accountID) && e.endpointsAllowed(s, se.accountID, ip)
	for _, step := range se.conn {
		ok = ok && step.allow(v)
	}
	if !ok {
		e.finishStream(se.accountID, se.id, "refused", 0, 0)
	}
	return ok
}

// streamEdge is what TCP and TLS edges share: the connection phase (an IP restriction, a
// traffic policy) and a backend.
type streamEdge struct {
	compiled
	conn    []connStep
	notYet  string
	backend backend
}

// connStep is a module compiled into a TCP or TLS edge's connection phase: it lets a
// connection through or refuses it (then closed: a raw stream has no page to show).
type connStep interface {
	allow(v *streamVisit) bool
}

// streamModules compiles the modules of a TCP or TLS edge into se, its connection phase in
// the order pipeline.go gives.
func (c *compiler) streamModules(se *streamEdge, owner string, tp *api.TrafficPolicyModule, ipr *api.IPRestrictionModule, b *api.BackendModule) (err error) {
	ips, err := c.ipRestriction(se.accountID, ipr)
	if err != nil {
		return err
	}
	if ips != nil {
		se.conn = append(se.conn, ips)
	}
	policy, notYet, err := c.trafficPolicy(owner, se.id, tp)
	if err != nil {
		return err
	}
	se.notYet = notYet
	if policy.has(trafficpolicy.PhaseTCPConnect) {
		se.conn = append(se.conn, connPolicy{policy})
	}
	se.backend, err = c.backendModule(se.accountID, b)
	return err
}
