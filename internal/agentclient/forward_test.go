package agentclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/internal/netcopy"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/proxyproto"
)

// streamKind is what Serve gets as its stream: each test runs on both.
type streamKind struct {
	name string
	pair func(testing.TB) (edge, agent net.Conn)
}

var streamKinds = []streamKind{{"tcp", tcpPair}, {"yamux", yamuxPair}}

// tcpPair is a connected loopback TCP pair.
func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// yamuxPair is a yamux stream as the server opens it and the agent accepts it, over a
// loopback TCP pair, with the window agentproto sets.
func yamuxPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	a, b := tcpPair(t)
	cfg := yamux.DefaultConfig()
	cfg.EnableKeepAlive, cfg.LogOutput, cfg.MaxStreamWindowSize = false, io.Discard, agentproto.StreamWindow
	server, err := yamux.Server(a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := yamux.Client(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close(); _ = agent.Close() })
	edge, err := server.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := agent.AcceptStream()
	if err != nil {
		t.Fatal(err)
	}
	return edge, accepted
}

// noLeaks fails t if a goroutine started during the test outlives its cleanups.
func noLeaks(t testing.TB) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // runs after the later cleanups
}

func newForwarder(t testing.TB, o ForwardOptions) (*Forwarder, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	o.Logger = zap.New(core)
	f, err := NewForwarder(o)
	if err != nil {
		t.Fatal(err)
	}
	return f, logs
}

func header(proto string) agentproto.StreamHeader {
	return agentproto.StreamHeader{TunnelID: "tn_1", Proto: proto, ClientAddr: netip.MustParseAddrPort("203.0.113.7:51234"), Hostport: "app.example.com:443"}
}

// serve runs Serve on a new stream of kind in the background, reads the dial result, which
// must say connected, and returns the stream's edge end, where the app's bytes follow, and
// a channel closed when Serve has returned.
func serve(ctx context.Context, t testing.TB, kind streamKind, f *Forwarder, h agentproto.StreamHeader, forwardsTo string) (net.Conn, <-chan struct{}) {
	t.Helper()
	edge, done := start(ctx, t, kind, f, h, forwardsTo)
	if r, err := agentproto.ReadStreamResult(edge); err != nil || r.Code != agentproto.StreamConnected {
		t.Fatalf("dial result %+v, %v; want connected", r, err)
	}
	return edge, done
}

// start runs Serve on a new stream of kind in the background and returns the stream's edge
// end, where the dial result comes first, and a channel closed when Serve has returned.
func start(ctx context.Context, t testing.TB, kind streamKind, f *Forwarder, h agentproto.StreamHeader, forwardsTo string) (net.Conn, <-chan struct{}) {
	t.Helper()
	edge, agent := kind.pair(t)
	// The caller read the header under a deadline and may leave it set: Serve clears it.
	if err := agent.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Serve(ctx, agent, h, forwardsTo)
	}()
	t.Cleanup(func() { _ = edge.Close(); <-done })
	return edge, done
}

// tcpApp runs handle on each connection to a loopback listener and returns its address.
func tcpApp(t testing.TB, handle func(*net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				handle(c.(*net.TCPConn))
			})
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-accepting; conns.Wait() })
	return ln.Addr().String()
}

// echo sends back what it reads, then ends its writing.
func echo(c *net.TCPConn) {
	if _, err := io.Copy(c, c); err == nil {
		_ = c.CloseWrite()
	}
}

// httpApp answers each request with what it saw of it.
func httpApp(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	alpn := ""
	if r.TLS != nil {
		alpn = r.TLS.NegotiatedProtocol
	}
	fmt.Fprintf(w, "%s %s host=%s body=%s alpn=%s", r.Method, r.URL, r.Host, body, alpn)
}

// exchange writes req on the stream and reads the response.
func exchange(t *testing.T, stream net.Conn, br *bufio.Reader, req string) string {
	t.Helper()
	if _, err := io.WriteString(stream, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", res.StatusCode, body)
}

// TestForwardHTTP: the edge's HTTP/1.1 requests reach an http app through Serve, two on one
// stream, for each form of forwards_to.
func TestForwardHTTP(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(httpApp))
	defer app.Close()
	_, port, _ := net.SplitHostPort(app.Listener.Addr().String())
	for _, kind := range streamKinds {
		for _, forwardsTo := range []string{app.URL, app.URL + "/", app.Listener.Addr().String(), port} {
			t.Run(kind.name+" "+forwardsTo, func(t *testing.T) {
				noLeaks(t)
				f, _ := newForwarder(t, ForwardOptions{ProxyProtocol: true}) // not for http
				edge, done := serve(t.Context(), t, kind, f, header("http"), forwardsTo)
				br := bufio.NewReader(edge)
				if got, want := exchange(t, edge, br, "POST /hello?x=1 HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 5\r\n\r\nhello"),
					"200 POST /hello?x=1 host=app.example.com body=hello alpn="; got != want {
					t.Errorf("first answer %q, want %q", got, want)
				}
				if got, want := exchange(t, edge, br, "GET /again HTTP/1.1\r\nHost: app.example.com\r\nConnection: close\r\n\r\n"),
					"200 GET /again host=app.example.com body= alpn="; got != want {
					t.Errorf("second answer %q, want %q", got, want)
				}
				if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
					t.Errorf("after the answer: %q, %v; want the stream's end", rest, err)
				}
				_ = edge.Close() // as the edge does after Connection: close
				<-done
			})
		}
	}
}

// writeCAFile writes app's certificate as a PEM file and returns its path.
func writeCAFile(t *testing.T, app *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: app.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestForwardHTTPS: an https:// forwards_to is reached over TLS with ALPN http/1.1, when its
// CA is trusted or verification is skipped; otherwise the stream is answered unreachable
// and closed, and the log says why.
func TestForwardHTTPS(t *testing.T) {
	app := httptest.NewUnstartedServer(http.HandlerFunc(httpApp))
	app.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	app.StartTLS()
	defer app.Close()
	ca := writeCAFile(t, app)
	for _, kind := range streamKinds {
		for _, tt := range []struct {
			name string
			o    ForwardOptions
		}{
			{"private CA", ForwardOptions{UpstreamCAFile: ca}},
			{"skip verify", ForwardOptions{UpstreamInsecureSkipVerify: true}},
		} {
			t.Run(kind.name+" "+tt.name, func(t *testing.T) {
				noLeaks(t)
				f, _ := newForwarder(t, tt.o)
				edge, done := serve(t.Context(), t, kind, f, header("https"), app.URL)
				br := bufio.NewReader(edge)
				if got, want := exchange(t, edge, br, "GET /secure HTTP/1.1\r\nHost: app.example.com\r\nConnection: close\r\n\r\n"),
					"200 GET /secure host=app.example.com body= alpn=http/1.1"; got != want {
					t.Errorf("answer %q, want %q", got, want)
				}
				_ = edge.Close()
				<-done
			})
		}
		t.Run(kind.name+" untrusted", func(t *testing.T) {
			noLeaks(t)
			f, logs := newForwarder(t, ForwardOptions{})
			edge, done := start(t.Context(), t, kind, f, header("https"), app.URL)
			<-done
			expectUnreachable(t, edge, "certificate signed by unknown authority")
			lines := logs.FilterMessage("cannot reach the upstream; closing the stream").All()
			if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0].ContextMap()["error"]), "certificate signed by unknown authority") {
				t.Errorf("logs %v, want one line saying the certificate is not trusted", logs.All())
			}
		})
	}
}

// randomBytes are n deterministic bytes.
func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// TestForwardTCPBulk: 10 MiB go to a tcp echo app and all come back, in order.
func TestForwardTCPBulk(t *testing.T) {
	app := tcpApp(t, echo)
	sent := randomBytes(10<<20, 1)
	for _, kind := range streamKinds {
		t.Run(kind.name, func(t *testing.T) {
			noLeaks(t)
			f, _ := newForwarder(t, ForwardOptions{})
			edge, done := serve(t.Context(), t, kind, f, header("tcp"), app)
			writeErr := make(chan error, 1)
			go func() {
				_, err := edge.Write(sent)
				if err == nil {
					err = netcopy.CloseWrite(edge)
				}
				writeErr <- err
			}()
			got, err := io.ReadAll(edge)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-writeErr; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, sent) {
				t.Errorf("got %d bytes back, want the %d sent", len(got), len(sent))
			}
			<-done
		})
	}
}

// TestForwardHalfClose: a visitor that ends its writing after its request still reads the
// whole answer; an app that ends its writing first still reads the whole request.
func TestForwardHalfClose(t *testing.T) {
	request := randomBytes(1<<20, 2)
	answerAfterEOF := tcpApp(t, func(c *net.TCPConn) {
		got, err := io.ReadAll(c)
		if err != nil {
			return
		}
		fmt.Fprintf(c, "read %d bytes, equal %t", len(got), bytes.Equal(got, request))
	})
	heard := make(chan string, 1)
	greetFirst := tcpApp(t, func(c *net.TCPConn) {
		if _, err := io.WriteString(c, "hello"); err != nil || c.CloseWrite() != nil {
			return
		}
		got, _ := io.ReadAll(c)
		heard <- string(got)
	})
	for _, kind := range streamKinds {
		t.Run(kind.name+" visitor first", func(t *testing.T) {
			noLeaks(t)
			f, _ := newForwarder(t, ForwardOptions{})
			edge, done := serve(t.Context(), t, kind, f, header("tcp"), answerAfterEOF)
			if _, err := edge.Write(request); err != nil {
				t.Fatal(err)
			}
			if err := netcopy.CloseWrite(edge); err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(edge); err != nil || string(got) != "read 1048576 bytes, equal true" {
				t.Errorf("answer %q, %v", got, err)
			}
			<-done
		})
		t.Run(kind.name+" app first", func(t *testing.T) {
			noLeaks(t)
			f, _ := newForwarder(t, ForwardOptions{})
			edge, done := serve(t.Context(), t, kind, f, header("tcp"), greetFirst)
			if got, err := io.ReadAll(edge); err != nil || string(got) != "hello" {
				t.Errorf("greeting %q, %v", got, err)
			}
			if _, err := io.WriteString(edge, "after the greeting"); err != nil {
				t.Fatal(err)
			}
			if err := netcopy.CloseWrite(edge); err != nil {
				t.Fatal(err)
			}
			if got := <-heard; got != "after the greeting" {
				t.Errorf("the app heard %q", got)
			}
			<-done
		})
	}
}

// TestForwardProxyProtocol: with the option, a tcp or tls upstream reads a PROXY protocol
// version 2 header first, naming the visitor and the endpoint; without it, or for http,
// none.
func TestForwardProxyProtocol(t *testing.T) {
	type report struct {
		header  proxyproto.Header
		err     error
		payload string
	}
	reports := make(chan report, 1)
	parseFirst := tcpApp(t, func(c *net.TCPConn) {
		var r report
		br := bufio.NewReader(c)
		if r.header, r.err = proxyproto.Parse(br); r.err == nil {
			payload, _ := io.ReadAll(br)
			r.payload = string(payload)
		}
		reports <- r
	})
	v4, v6 := netip.MustParseAddrPort("203.0.113.7:51234"), netip.MustParseAddrPort("[2001:db8::7]:51234")
	for _, tt := range []struct {
		name            string
		proto, hostport string
		client          netip.AddrPort
		source, dest    string
		tlvs            []proxyproto.TLV
	}{
		{"tcp on an IP", "tcp", "198.51.100.1:20001", v4, "203.0.113.7:51234", "198.51.100.1:20001", nil},
		{"tcp on a name", "tcp", "1.tcp.example.com:20001", v4, "203.0.113.7:51234", "0.0.0.0:20001", nil},
		{"tcp on a name from IPv6", "tcp", "1.tcp.example.com:20001", v6, "[2001:db8::7]:51234", "[::]:20001", nil},
		{"tcp mapped", "tcp", "[2001:db8::1]:20001", netip.MustParseAddrPort("[::ffff:203.0.113.7]:51234"), "[::ffff:203.0.113.7]:51234", "[2001:db8::1]:20001", nil},
		{"tls", "tls", "app.example.com:443", v4, "203.0.113.7:51234", "0.0.0.0:443", []proxyproto.TLV{{Type: tlvAuthority, Value: []byte("app.example.com")}}},
	} {
		for _, kind := range streamKinds {
			t.Run(kind.name+" "+tt.name, func(t *testing.T) {
				noLeaks(t)
				f, _ := newForwarder(t, ForwardOptions{ProxyProtocol: true})
				h := agentproto.StreamHeader{TunnelID: "tn_1", Proto: tt.proto, ClientAddr: tt.client, Hostport: tt.hostport}
				edge, done := serve(t.Context(), t, kind, f, h, parseFirst)
				if _, err := io.WriteString(edge, "payload"); err != nil {
					t.Fatal(err)
				}
				_ = netcopy.CloseWrite(edge)
				r := <-reports
				if r.err != nil {
					t.Fatal(r.err)
				}
				if got := r.header; got.Command != proxyproto.Proxy || got.Source.String() != tt.source || got.Destination.String() != tt.dest || fmt.Sprint(got.TLVs) != fmt.Sprint(tt.tlvs) {
					t.Errorf("header %+v, want source %s, destination %s, TLVs %v", got, tt.source, tt.dest, tt.tlvs)
				}
				if r.payload != "payload" {
					t.Errorf("payload %q after the header", r.payload)
				}
				_, _ = io.ReadAll(edge)
				<-done
			})
		}
	}
	t.Run("off", func(t *testing.T) {
		noLeaks(t)
		f, _ := newForwarder(t, ForwardOptions{})
		edge, done := serve(t.Context(), t, streamKinds[1], f, header("tcp"), parseFirst)
		if _, err := io.WriteString(edge, strings.Repeat("p", 16)); err != nil {
			t.Fatal(err)
		}
		_ = netcopy.CloseWrite(edge)
		if r := <-reports; r.err == nil || !strings.Contains(r.err.Error(), "not a PROXY protocol version 2 header") {
			t.Errorf("the app parsed %+v, %v; want no header", r.header, r.err)
		}
		_, _ = io.ReadAll(edge)
		<-done
	})
}

// closedAddr is a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// expectUnreachable reads a dial result saying the app is unreachable because of want,
// then the stream's end.
func expectUnreachable(t *testing.T, edge net.Conn, want string) {
	t.Helper()
	if r, err := agentproto.ReadStreamResult(edge); err != nil || r.Code != agentproto.StreamUnreachable || !strings.Contains(r.Reason, want) {
		t.Errorf("dial result %+v, %v; want unreachable with %q", r, err, want)
	}
	if got, err := io.ReadAll(edge); err != nil || len(got) != 0 {
		t.Errorf("after the dial result the stream gave %q, %v; want its end", got, err)
	}
}

// TestForwardRefused: a failed dial, or a forwards_to the proto cannot use, is answered
// with StreamUnreachable and its reason, and the stream closed; the log says why.
func TestForwardRefused(t *testing.T) {
	for _, kind := range streamKinds {
		for _, tt := range []struct {
			name, proto, forwardsTo, log, err string
		}{
			{"dial", "tcp", closedAddr(t), "cannot reach the upstream; closing the stream", "connection refused"},
			{"url for tcp", "tcp", "http://localhost:1", "cannot forward the stream", "not to a URL"},
		} {
			t.Run(kind.name+" "+tt.name, func(t *testing.T) {
				noLeaks(t)
				f, logs := newForwarder(t, ForwardOptions{})
				edge, done := start(t.Context(), t, kind, f, header(tt.proto), tt.forwardsTo)
				<-done
				expectUnreachable(t, edge, tt.err)
				lines := logs.FilterMessage(tt.log).All()
				if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0].ContextMap()["error"]), tt.err) || lines[0].ContextMap()["tunnel_id"] != "tn_1" {
					t.Errorf("logs %v, want one %q line with %q", logs.All(), tt.log, tt.err)
				}
			})
		}
	}
}

// TestForwardEnds: the context's end, and an app's reset, end both sides though neither
// the visitor nor the app ends its writing.
func TestForwardEnds(t *testing.T) {
	appEnded := make(chan error, 1)
	holdOpen := tcpApp(t, func(c *net.TCPConn) {
		_, err := io.Copy(c, c) // until Serve ends the connection
		appEnded <- err
	})
	reset := tcpApp(t, func(c *net.TCPConn) {
		var b [4]byte
		if _, err := io.ReadFull(c, b[:]); err == nil {
			_ = c.SetLinger(0) // Close sends RST
		}
	})
	for _, kind := range streamKinds {
		t.Run(kind.name+" context", func(t *testing.T) {
			noLeaks(t)
			f, _ := newForwarder(t, ForwardOptions{})
			ctx, cancel := context.WithCancel(t.Context())
			edge, done := serve(ctx, t, kind, f, header("tcp"), holdOpen)
			if _, err := io.WriteString(edge, "ping"); err != nil {
				t.Fatal(err)
			}
			var b [4]byte
			if _, err := io.ReadFull(edge, b[:]); err != nil || string(b[:]) != "ping" {
				t.Fatalf("echo %q, %v", b, err)
			}
			cancel()
			<-done
			if err := <-appEnded; err != nil {
				t.Logf("the app's connection ended with %v", err)
			}
			if got, err := io.ReadAll(edge); len(got) != 0 {
				t.Errorf("after the end the stream gave %q, %v", got, err)
			}
		})
		t.Run(kind.name+" reset", func(t *testing.T) {
			noLeaks(t)
			f, _ := newForwarder(t, ForwardOptions{})
			edge, done := serve(t.Context(), t, kind, f, header("tcp"), reset)
			if _, err := io.WriteString(edge, "ping"); err != nil {
				t.Fatal(err)
			}
			<-done
			if got, _ := io.ReadAll(edge); len(got) != 0 {
				t.Errorf("after the reset the stream gave %q", got)
			}
		})
	}
}

func TestParseForwardsTo(t *testing.T) {
	for _, tt := range []struct {
		proto, in, addr string
		https           bool
		err             string
	}{
		{"http", "http://localhost:8080", "localhost:8080", false, ""},
		{"https", "http://app.internal", "app.internal:80", false, ""},
		{"http", "https://app.internal/", "app.internal:443", true, ""},
		{"http", "https://[::1]:8443", "[::1]:8443", true, ""},
		{"http", "127.0.0.1:3000", "127.0.0.1:3000", false, ""},
		{"http", "8080", "localhost:8080", false, ""},
		{"tcp", "22", "localhost:22", false, ""},
		{"tcp", "db.internal:5432", "db.internal:5432", false, ""},
		{"tls", "[::1]:443", "[::1]:443", false, ""},
		{"http", "localhost", "", false, `forwards_to "localhost" is not http://host:port, https://host:port, host:port or a port`},
		{"http", "ftp://x:21", "", false, "is not http://host:port"},
		{"http", "http://:80", "", false, "is not http://host:port"},
		{"http", "http://x/api", "", false, "may hold no user, path, query or fragment"},
		{"http", "http://x?a=1", "", false, "may hold no user, path, query or fragment"},
		{"http", "http://u:p@x", "", false, "may hold no user"},
		{"http", "http://x:0", "", false, `port "0" is not 1 to 65535`},
		{"http", "x:65536", "", false, "is not http://host:port"},
		{"http", "0", "", false, "is not http://host:port"},
		{"tcp", "http://localhost:22", "", false, "a tcp tunnel forwards its bytes as they are to host:port or a port, not to a URL"},
		{"tls", "https://localhost:443", "", false, "a tls tunnel forwards"},
		{"tcp", ":22", "", false, `forwards_to ":22" is not host:port or a port`},
		{"tcp", "x:ssh", "", false, "is not host:port or a port"},
	} {
		addr, https, err := parseForwardsTo(tt.proto, tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: %v, want an error with %q", tt.proto, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || addr != tt.addr || https != tt.https {
			t.Errorf("%s %q = %q, %t, %v; want %q, %t", tt.proto, tt.in, addr, https, err, tt.addr, tt.https)
		}
	}
	// Validate says it at startup.
	err := TunnelConfig{Proto: "tcp", Addr: "1.tcp.example.com:20001", ForwardsTo: "http://localhost:22"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "not to a URL") {
		t.Errorf("Validate = %v", err)
	}
}

func TestNewForwarderChecksItsOptions(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		o    ForwardOptions
		want string
	}{
		{ForwardOptions{UpstreamCAFile: filepath.Join(t.TempDir(), "missing.pem")}, "reading the upstream CA file"},
		{ForwardOptions{UpstreamCAFile: notPEM}, "holds no PEM certificate"},
		{ForwardOptions{UpstreamCAFile: notPEM, UpstreamInsecureSkipVerify: true}, "exclude each other"},
	} {
		if _, err := NewForwarder(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewForwarder(%+v) = %v, want %q", tt.o, err, tt.want)
		}
	}
}

// BenchmarkForwardTCP: one bulk stream through Serve to a tcp app that discards it.
func BenchmarkForwardTCP(b *testing.B) {
	app := tcpApp(b, func(c *net.TCPConn) {
		if _, err := io.Copy(io.Discard, c); err == nil {
			_ = c.CloseWrite()
		}
	})
	chunk := randomBytes(32<<10, 3)
	for _, kind := range streamKinds {
		b.Run(kind.name, func(b *testing.B) {
			f, err := NewForwarder(ForwardOptions{})
			if err != nil {
				b.Fatal(err)
			}
			edge, done := serve(b.Context(), b, kind, f, header("tcp"), app)
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := edge.Write(chunk); err != nil {
					b.Fatal(err)
				}
			}
			if err := netcopy.CloseWrite(edge); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(edge); err != nil { // the app has read it all
				b.Fatal(err)
			}
			b.StopTimer()
			<-done
		})
	}
}
