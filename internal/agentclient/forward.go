package agentclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/internal/netcopy"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/inspect"
	"github.com/warrenhq/terraform-provider-warren/internal/proxyproto"
)

// DefaultDialTimeout bounds the dial of a local app (and an https:// app's TLS handshake)
// when ForwardOptions names none.
const DefaultDialTimeout = 10 * time.Second

// tlvAuthority is PROXY protocol version 2's PP2_TYPE_AUTHORITY: the host name the visitor
// asked for.
const tlvAuthority = 0x02

// ForwardOptions say how the agent reaches the local apps its tunnels forward to.
type ForwardOptions struct {
	// UpstreamCAFile is a PEM file of CA certificates trusted, beside the system's, for
	// https:// upstreams: a private CA.
	UpstreamCAFile string
	// UpstreamInsecureSkipVerify accepts any certificate from https:// upstreams.
	UpstreamInsecureSkipVerify bool
	// ProxyProtocol sends a PROXY protocol version 2 header first to the upstreams of tcp
	// and tls tunnels (see proxyHeader); http and https upstreams get X-Forwarded-For from
	// the edge instead.
	ProxyProtocol bool
	// DialTimeout bounds each dial, TLS handshake included (default DefaultDialTimeout).
	DialTimeout time.Duration
	// Logger receives a line per failed dial and a debug line per stream; never a payload.
	// Default: no logs.
	Logger *zap.Logger
	// Inspector, when set, sees a copy of the bytes of http and https tunnels' streams
	// (warren-agent --inspect) and replays requests through this forwarder's dial.
	Inspector *inspect.Inspector
}

// Forwarder carries visitor streams to the local apps.
type Forwarder struct {
	proxyProtocol bool
	dialer        net.Dialer
	tls           *tls.Config // for https:// upstreams; each gets a clone naming its server
	log           *zap.Logger
	inspector     *inspect.Inspector
	// proto + " " + forwards_to → *upstream, parsed once per tunnel; the agent's own
	// configuration names them, so the map stays small.
	upstreams sync.Map
}

// NewForwarder checks o and reads its CA file.
func NewForwarder(o ForwardOptions) (*Forwarder, error) {
	if o.UpstreamCAFile != "" && o.UpstreamInsecureSkipVerify {
		return nil, errors.New("an upstream CA file and skipping upstream verification exclude each other")
	}
	roots, err := upstreamRoots(o.UpstreamCAFile)
	if err != nil {
		return nil, err
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	f := &Forwarder{
		proxyProtocol: o.ProxyProtocol,
		dialer:        net.Dialer{Timeout: o.DialTimeout},
		tls: &tls.Config{
			RootCAs:            roots,
			InsecureSkipVerify: o.UpstreamInsecureSkipVerify, //nolint:gosec // the operator's explicit choice (--upstream-insecure-skip-verify)
			// The edge speaks HTTP/1.1 on the stream, so the upstream must too.
			NextProtos:         []string{"http/1.1"},
			MinVersion:         tls.VersionTLS12,
			ClientSessionCache: tls.NewLRUClientSessionCache(0),
		},
		log:       o.Logger,
		inspector: o.Inspector,
	}
	if o.Inspector != nil {
		o.Inspector.SetDial(f.dialApp)
	}
	return f, nil
}

// upstreamRoots is the system's CAs plus those of file; nil (the system's) without a file.
func upstreamRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the upstream CA file: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the upstream CA file %s holds no PEM certificate", file)
	}
	return roots, nil
}

// upstream is a parsed forwards_to.
type upstream struct {
	addr string      // host:port dialed
	tls  *tls.Config // nil but for https://
}

// parseForwardsTo reads a tunnel's forwards_to. An http or https tunnel's streams carry
// HTTP/1.1, sent to http://host[:port] or https://host[:port] (no path, query or user),
// host:port or a bare port (http on localhost, as ngrok reads "8080"). A tcp or tls tunnel's
// streams are forwarded as they are, to host:port or a bare port on localhost: a URL is
// refused there, since its scheme would promise a protocol the agent does not speak.
func parseForwardsTo(proto, forwardsTo string) (addr string, https bool, err error) {
	web := proto == "http" || proto == "https"
	if strings.Contains(forwardsTo, "://") {
		if !web {
			return "", false, fmt.Errorf("forwards_to %q: a %s tunnel forwards its bytes as they are to host:port or a port, not to a URL", forwardsTo, proto)
		}
		u, err := url.Parse(forwardsTo)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
			return "", false, fmt.Errorf("forwards_to %q is not http://host:port, https://host:port, host:port or a port", forwardsTo)
		case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
			return "", false, fmt.Errorf("forwards_to %q may hold no user, path, query or fragment: the visitor's request keeps its own path", forwardsTo)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if !validPort(port) {
			return "", false, fmt.Errorf("forwards_to %q: port %q is not 1 to 65535", forwardsTo, port)
		}
		return net.JoinHostPort(u.Hostname(), port), u.Scheme == "https", nil
	}
	if validPort(forwardsTo) {
		return net.JoinHostPort("localhost", forwardsTo), false, nil
	}
	host, port, err := net.SplitHostPort(forwardsTo)
	if err != nil || host == "" || !validPort(port) {
		if web {
			return "", false, fmt.Errorf("forwards_to %q is not http://host:port, https://host:port, host:port or a port", forwardsTo)
		}
		return "", false, fmt.Errorf("forwards_to %q is not host:port or a port", forwardsTo)
	}
	return forwardsTo, false, nil
}

// validPort: a decimal port from 1 to 65535.
func validPort(s string) bool {
	n, err := strconv.ParseUint(s, 10, 16)
	return err == nil && n > 0
}

// upstreamFor returns forwardsTo parsed for proto, parsing it once.
func (f *Forwarder) upstreamFor(proto, forwardsTo string) (*upstream, error) {
	key := proto + " " + forwardsTo
	if u, ok := f.upstreams.Load(key); ok {
		return u.(*upstream), nil
	}
	addr, https, err := parseForwardsTo(proto, forwardsTo)
	if err != nil {
		return nil, err
	}
	u := &upstream{addr: addr}
	if https {
		host, _, _ := net.SplitHostPort(addr)
		u.tls = f.tls.Clone()
		u.tls.ServerName = host
	}
	f.upstreams.Store(key, u)
	return u, nil
}

// Serve carries one visitor stream whose header was already read: it dials forwardsTo
// (the tunnel's forwards_to) for h.Proto and copies both ways until both sides are done or
// ctx ends; it always closes stream.
//
// When one side ends its writing, Serve ends the other's: CloseWrite on a TCP or TLS
// connection, Close on a stream without CloseWrite, which for a yamux stream sends FIN and
// keeps reading (its half-close; a net.Pipe, which cannot half-close, ends both ways
// there). A visitor that half-closes after its request thus still gets the whole answer.
// An error on either side, or ctx's end, ends both at once.
//
// The stream's first byte is the dial result (agentproto.StreamResult), written once the
// app is connected (its PROXY protocol header sent); a failed dial is answered with
// StreamUnreachable and its reason, and the stream closed.
func (f *Forwarder) Serve(ctx context.Context, stream net.Conn, h agentproto.StreamHeader, forwardsTo string) {
	defer stream.Close()
	_ = stream.SetDeadline(time.Time{}) // the header's read deadline, if still set, is over
	log := f.log.With(zap.String("tunnel_id", h.TunnelID), zap.String("proto", h.Proto), zap.Stringer("client_addr", h.ClientAddr))
	unreachable := func(err error) {
		_ = agentproto.WriteStreamResult(stream, agentproto.StreamResult{Code: agentproto.StreamUnreachable, Reason: err.Error()})
	}
	up, err := f.upstreamFor(h.Proto, forwardsTo)
	if err != nil {
		log.Warn("cannot forward the stream", zap.Error(err))
		unreachable(err)
		return
	}
	conn, err := f.dial(ctx, up)
	if err != nil {
		log.Warn("cannot reach the upstream; closing the stream", zap.String("forwards_to", forwardsTo), zap.Error(err))
		unreachable(err)
		return
	}
	defer conn.Close()
	if f.proxyProtocol && (h.Proto == "tcp" || h.Proto == "tls") {
		if err := writeProxyHeader(conn, h); err != nil {
			log.Warn("cannot send the PROXY protocol header; closing the stream", zap.String("forwards_to", forwardsTo), zap.Error(err))
			unreachable(err)
			return
		}
	}
	if err := agentproto.WriteStreamResult(stream, agentproto.StreamResult{Code: agentproto.StreamConnected}); err != nil {
		log.Debug("the stream ended before its dial result", zap.Error(err))
		return
	}

	var once sync.Once
	abort := func() {
		once.Do(func() {
			// A yamux stream's Close ends only its writing: the deadline ends a Read.
			_ = stream.SetDeadline(time.Now())
			_ = stream.Close()
			_ = conn.Close()
		})
	}
	defer context.AfterFunc(ctx, abort)()

	var fromVisitor, fromApp io.Reader = stream, conn
	if f.inspector != nil && (h.Proto == "http" || h.Proto == "https") {
		// The inspector reads copies; the forwarded bytes stay as they are.
		tap := f.inspector.Tap(h.TunnelID, h.Proto, forwardsTo)
		defer tap.Close()
		fromVisitor, fromApp = io.TeeReader(stream, tap.Request), io.TeeReader(conn, tap.Response)
	}

	start := time.Now()
	var fromUpstream int64
	var fromErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if fromUpstream, fromErr = f.copyHalf(stream, fromApp); fromErr != nil {
			abort()
		}
	}()
	toUpstream, toErr := f.copyHalf(conn, fromVisitor)
	if toErr != nil {
		abort()
	}
	<-done
	log.Debug("stream ended", zap.Int64("bytes_to_upstream", toUpstream), zap.Int64("bytes_from_upstream", fromUpstream),
		zap.NamedError("to_upstream_error", toErr), zap.NamedError("from_upstream_error", fromErr), zap.Duration("duration", time.Since(start)))
}

// dial connects to u, with TLS for an https:// upstream.
func (f *Forwarder) dial(ctx context.Context, u *upstream) (net.Conn, error) {
	if u.tls == nil {
		return f.dialer.DialContext(ctx, "tcp", u.addr)
	}
	d := tls.Dialer{NetDialer: &f.dialer, Config: u.tls}
	return d.DialContext(ctx, "tcp", u.addr)
}

// dialApp connects to forwardsTo as a stream of proto would: the inspector's replays.
func (f *Forwarder) dialApp(ctx context.Context, proto, forwardsTo string) (net.Conn, error) {
	up, err := f.upstreamFor(proto, forwardsTo)
	if err != nil {
		return nil, err
	}
	return f.dial(ctx, up)
}

// copyHalf copies src to dst until src ends, then ends dst's writing. It returns the bytes
// copied and the first error (nil when src ended cleanly).
func (f *Forwarder) copyHalf(dst net.Conn, src io.Reader) (int64, error) {
	n, err := netcopy.Copy(dst, src)
	if err != nil {
		return n, err
	}
	return n, netcopy.CloseWrite(dst)
}

// writeProxyHeader sends the PROXY protocol version 2 header of h's visitor connection: the
// source is the visitor's address; the destination is the endpoint's address when its
// hostport names an IP, else the unspecified address of the source's family with the
// endpoint's port (the header has no room for a name). A tls tunnel's header also carries
// the endpoint's hostname as the AUTHORITY TLV (what the visitor sent as SNI).
func writeProxyHeader(w io.Writer, h agentproto.StreamHeader) error {
	host, portText, err := net.SplitHostPort(h.Hostport)
	if err != nil {
		return fmt.Errorf("hostport %q: %w", h.Hostport, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return fmt.Errorf("hostport %q: the port is not a number", h.Hostport)
	}
	src := netip.AddrPortFrom(h.ClientAddr.Addr().Unmap(), h.ClientAddr.Port())
	dstAddr, err := netip.ParseAddr(host)
	var tlvs []proxyproto.TLV
	if err != nil {
		dstAddr = netip.IPv6Unspecified()
		if src.Addr().Is4() {
			dstAddr = netip.IPv4Unspecified()
		}
		if h.Proto == "tls" {
			tlvs = []proxyproto.TLV{{Type: tlvAuthority, Value: []byte(host)}}
		}
	}
	b, err := proxyproto.Header{Command: proxyproto.Proxy, Source: src, Destination: netip.AddrPortFrom(dstAddr, uint16(port)), TLVs: tlvs}.MarshalBinary()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
