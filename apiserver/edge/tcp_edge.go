package edge

import (
	"encoding/json"
	"net"
	"strconv"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"time"
)

// tcpEdge is a TCP edge compiled: connections to its reserved addresses go to its backend.
type tcpEdge struct {
	streamEdge
	hostports []string
}

func (c *compiler) tcpEdge(o *store.Object) *tcpEdge {
	e := &tcpEdge{streamEdge: streamEdge{compiled: compiled{id: o.ID, accountID: o.AccountID}}}
	var doc api.TCPEdge
	err := json.Unmarshal(o.Doc, &doc)
	if err == nil {
		e.hostports = doc.Hostports
		err = c.streamModules(&e.streamEdge, rules.PolicyOwnerTCPEdge, doc.TrafficPolicy, doc.IPRestriction, doc.Backend)
	}
	if err != nil {
		e.err = err
		c.logErr(o.Kind, o.ID, err)
	}
	return e
}

// ServeTCP opens, on host, a listener for the port of every reserved address, and keeps the
// set in step with the snapshot (--edge-tcp-host). A connection goes to the TCP edge on its
// address, else to the tcp agent endpoint bound there, else it is closed.
func (e *Edge) ServeTCP(host string) {
	e.mu.Lock()
	e.tcpHost = host
	e.mu.Unlock()
	e.reconcileTCP()
}

// TCPAddr is the address the listener of a reserved address's port listens on, if open.
func (e *Edge) TCPAddr(port int) (net.Addr, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	l, ok := e.tcp[port]
	if !ok {
		return nil, false
	}
	return l.Addr(), true
}

// reconcileTCP opens the listeners of new reserved addresses and closes those of released
// ones (open connections stay).
func (e *Edge) reconcileTCP() {
	s := e.snap.Load()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tcpHost == "" || e.closed || s == nil {
		return
	}
	for port, l := range e.tcp {
		if _, ok := s.addrs[port]; !ok {
			l.Close()
			delete(e.tcp, port)
		}
	}
	for port, addr := range s.addrs {
		if _, ok := e.tcp[port]; ok {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(e.tcpHost, strconv.Itoa(port)))
		if err != nil {
			e.log.Error("edge: cannot listen for a reserved address", zap.String("addr", addr), zap.Error(err))
			continue
		}
		e.tcp[port] = l
		e.conns.Go(func() { _ = e.accept(l, func(c net.Conn) { e.handleTCP(c, port) }) })
	}
}

// handleTCP serves one connection to the reserved address on port.
func (e *Edge) handleTCP(c net.Conn, port int) {
	s := e.Snapshot(e.closeCtx)
	addr, ok := s.addrs[port]
	if !ok {
		c.Close()
		return
	}
	v := streamVisit{hostport: addr, client: clientAddr(c.RemoteAddr()), proto: "tcp", server: clientAddr(c.LocalAddr()), start: time.Now()}
	if edge, ok := s.tcp[addr]; ok {
		v.edgeID, v.account = edge.id, edge.accountID
		if !e.streamAllowed(s, &edge.streamEdge, &v) {
			c.Close()
			return
		}
		e.serveStream(c, v, edge.backend.plan(e.planner()))
		return
	}
	if t, ok := e.opts.Tunnels.Endpoint("tcp", addr); ok {
		e.serveEndpointStream(s, c, t, "tcp", addr)
		return
	}
	e.log.Debug("edge: a connection to a reserved address with no tcp edge or endpoint", zap.String("addr", addr))
	c.Close()
}
