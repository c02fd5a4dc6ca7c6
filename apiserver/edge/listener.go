package edge

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ServeHTTPS serves the --edge-https-listen listener until it is closed: TLS with SNI for
// HTTPS edges, TLS edges and agent endpoints of proto https and tls. The ClientHello is read
// first, without terminating (a TLS edge that passes TLS through forwards it whole); then
// the connection is terminated with the certificate of the name, or passed through.
func (e *Edge) ServeHTTPS(l net.Listener) error {
	return e.accept(l, e.handleTLS)
}

// ServePlainHTTP serves the --edge-http-listen listener: agent endpoints of proto http.
func (e *Edge) ServePlainHTTP(l net.Listener) error {
	return e.plain.Serve(l)
}

// accept runs handle on each connection of l until l is closed.
func (e *Edge) accept(l net.Listener, handle func(net.Conn)) error {
	var delay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || e.closeCtx.Err() != nil {
				return nil
			}
			// Out of file descriptors and the like: wait a little, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			e.log.Warn("edge: accept failed", zap.Error(err), zap.Duration("retry_in", delay))
			time.Sleep(delay)
			continue
		}
		delay = 0
		e.conns.Go(func() { handle(c) })
	}
}

// handleTLS routes one connection of the HTTPS listener by the SNI of its ClientHello.
func (e *Edge) handleTLS(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(e.opts.HandshakeTimeout))
	hello, conn, err := readClientHello(c)
	if err != nil {
		c.Close() // not TLS, or too slow to say hello
		return
	}
	if e.serveALPNChallenge(conn, hello) {
		return
	}
	host := strings.ToLower(hello.ServerName)
	s := e.Snapshot(e.closeCtx)
	if st := s.lookupSite(host); st != nil {
		switch {
		case st.tls != nil:
			e.serveTLSEdge(s, conn, st.tls, hello)
		case st.https != nil && st.https.err == nil:
			if cert := e.certificate(s, host); cert != nil {
				e.httpsConn.push(tls.Server(conn, st.https.tls.config(cert, "http/1.1")))
				return
			}
			conn.Close()
		default: // an HTTPS edge that does not compile: its error page, with the name's certificate
			e.terminateForPage(s, conn, host)
		}
		return
	}
	if t, ok := e.opts.Tunnels.Endpoint("tls", host+":443"); ok {
		e.serveEndpointStream(s, conn, t, "tls", host+":443")
		return
	}
	e.terminateForPage(s, conn, host)
}

// terminateForPage terminates a connection for a name with a certificate so that its
// requests get a page (an agent endpoint of proto https, or unknown host's 404); without a
// certificate there is nothing to answer with and the connection is closed.
func (e *Edge) terminateForPage(s *Snapshot, conn net.Conn, host string) {
	cert := e.certificate(s, host)
	if cert == nil {
		conn.Close()
		return
	}
	e.httpsConn.push(tls.Server(conn, tlsModules{minVersion: tls.VersionTLS12}.config(cert, "http/1.1")))
}

// readClientHello reads a connection's ClientHello without answering it, and returns it
// with a connection that replays what was read.
func readClientHello(c net.Conn) (*tls.ClientHelloInfo, net.Conn, error) {
	var buf bytes.Buffer
	var hello *tls.ClientHelloInfo
	err := tls.Server(readOnlyConn{r: io.TeeReader(c, &buf)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			hello = new(tls.ClientHelloInfo)
			*hello = *h
			return nil, errHelloRead
		},
	}).Handshake()
	if hello == nil {
		return nil, nil, err
	}
	return hello, &replayConn{Conn: c, r: io.MultiReader(&buf, c)}, nil
}

var errHelloRead = errors.New("edge: ClientHello read")

// readOnlyConn is what readClientHello hands crypto/tls: reads come from r, writes go
// nowhere (the handshake is abandoned before any would matter); the rest is the nil
// net.Conn's, which crypto/tls does not call before GetConfigForClient.
type readOnlyConn struct {
	net.Conn
	r io.Reader
}

func (c readOnlyConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (readOnlyConn) Write([]byte) (int, error)    { return 0, io.ErrClosedPipe }
func (readOnlyConn) Close() error                 { return nil }
func (readOnlyConn) SetDeadline(time.Time) error  { return nil }

// replayConn reads r (what was read already, then the connection) and writes the connection.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener hands connections accepted elsewhere to an http.Server.
type connListener struct {
	conns  chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newConnListener() *connListener {
	return &connListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{} }
