package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/cluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// wire is a TCP relay between a link's client and its server: it counts the connections,
// keeps every byte that crossed it, and can cut them all as a dying peer would.
type wire struct {
	addr     string
	accepted atomic.Int32
	ended    chan struct{} // one value per connection that ended

	mu    sync.Mutex
	seen  bytes.Buffer
	conns []net.Conn
}

func newWire(t *testing.T, target string) *wire {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	w := &wire{addr: ln.Addr().String(), ended: make(chan struct{}, 100)}
	go func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			w.accepted.Add(1)
			b, err := net.Dial("tcp", target)
			if err != nil {
				_ = a.Close()
				continue
			}
			w.mu.Lock()
			w.conns = append(w.conns, a, b)
			w.mu.Unlock()
			go w.relay(a, b)
		}
	}()
	t.Cleanup(w.cut)
	return w
}

// relay copies a and b both ways, keeping the bytes, until either side ends.
func (w *wire) relay(a, b net.Conn) {
	var once sync.Once
	end := func() { _ = a.Close(); _ = b.Close() }
	var wg sync.WaitGroup
	wg.Add(2)
	for _, p := range [][2]net.Conn{{a, b}, {b, a}} {
		go func() {
			defer wg.Done()
			defer once.Do(end)
			buf := make([]byte, 32<<10)
			for {
				n, err := p[0].Read(buf)
				if n > 0 {
					w.mu.Lock()
					w.seen.Write(buf[:n])
					w.mu.Unlock()
					if _, err := p[1].Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	w.ended <- struct{}{}
}

// cut breaks every connection relayed so far.
func (w *wire) cut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.conns {
		_ = c.Close()
	}
	w.conns = nil
}

func (w *wire) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.seen.Bytes())
}

func dialEcho(app string) func(context.Context, string, agentproto.StreamHeader) (net.Conn, error) {
	return func(ctx context.Context, _ string, _ agentproto.StreamHeader) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", app)
	}
}

// echo writes line on st and checks that it comes back.
func echo(st net.Conn, r *bufio.Reader, line string) error {
	if _, err := io.WriteString(st, line+"\n"); err != nil {
		return err
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return fmt.Errorf("echo: %q, want %q", got, line)
	}
	return nil
}

func header(hostport string) agentproto.StreamHeader {
	return agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: hostport}
}

func TestLinkEncryptsTheStreams(t *testing.T) {
	secret := sealing.GenerateKey()
	addr, _, _ := serve(t, linkKeys(t, secret), dialEcho(echoApp(t)))
	w := newWire(t, addr)
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	defer c.Close()
	const hostport, payload = "secret-host.example.com:20001", "the visitor's secret words"
	st, err := c.OpenStream(context.Background(), w.addr, "tn_secret", header(hostport))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := echo(st, bufio.NewReader(st), payload); err != nil {
		t.Fatal(err)
	}
	seen := w.bytes()
	if len(seen) < 2*len(payload) {
		t.Fatalf("the wire carried %d bytes", len(seen))
	}
	for _, clear := range []string{payload, hostport, "tn_secret", "203.0.113.7"} {
		if bytes.Contains(seen, []byte(clear)) {
			t.Errorf("%q crossed the wire in clear", clear)
		}
	}
}

func TestLinkCarriesManyStreamsOverOneConnection(t *testing.T) {
	secret := sealing.GenerateKey()
	addr, asked, _ := serve(t, linkKeys(t, secret), dialEcho(echoApp(t)))
	w := newWire(t, addr)
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	defer c.Close()
	const streams = 50
	errs := make(chan error, streams)
	for i := range streams {
		go func() {
			st, err := c.OpenStream(context.Background(), w.addr, fmt.Sprintf("tn_%d", i), header("1.tcp.example.com:20001"))
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			r := bufio.NewReader(st)
			for j := range 10 {
				if err := echo(st, r, fmt.Sprintf("stream %d line %d", i, j)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range streams {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := w.accepted.Load(); n != 1 {
		t.Errorf("%d link connections, want 1", n)
	}
	if n := asked.Load(); n != streams {
		t.Errorf("%d streams opened at the holder, want %d", n, streams)
	}
}

func TestLinkRedialsAfterThePeerDies(t *testing.T) {
	secret := sealing.GenerateKey()
	addr, _, _ := serve(t, linkKeys(t, secret), dialEcho(echoApp(t)))
	w := newWire(t, addr)
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	defer c.Close()
	st, err := c.OpenStream(context.Background(), w.addr, "tn_1", header("1.tcp.example.com:20001"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := bufio.NewReader(st)
	if err := echo(st, r, "before"); err != nil {
		t.Fatal(err)
	}
	w.cut()
	if err := echo(st, r, "after"); err == nil {
		t.Fatal("the stream outlived its link")
	}
	nextStreamOnASecondLink(t, c, w)
}

// nextStreamOnASecondLink opens a stream after the first link ended: it carries bytes, over
// the second connection the wire saw.
func nextStreamOnASecondLink(t *testing.T, c *cluster.Client, w *wire) {
	t.Helper()
	next, err := c.OpenStream(context.Background(), w.addr, "tn_1", header("1.tcp.example.com:20001"))
	if err != nil {
		t.Fatalf("the next stream: %v", err)
	}
	defer next.Close()
	if err := echo(next, bufio.NewReader(next), "again"); err != nil {
		t.Fatal(err)
	}
	if n := w.accepted.Load(); n != 2 {
		t.Errorf("%d link connections, want 2", n)
	}
}

func TestLinkClosesAnIdleConnection(t *testing.T) {
	secret := sealing.GenerateKey()
	addr, _, _ := serve(t, linkKeys(t, secret), dialEcho(echoApp(t)))
	w := newWire(t, addr)
	c := &cluster.Client{Keys: linkKeys(t, secret), IdleTimeout: 20 * time.Millisecond}
	defer c.Close()
	st, err := c.OpenStream(context.Background(), w.addr, "tn_1", header("1.tcp.example.com:20001"))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(st)
	if err := echo(st, r, "hello"); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	if _, err := io.ReadAll(r); err != nil { // the holder's end follows
		t.Fatal(err)
	}
	<-w.ended // the client closed the idle link
	nextStreamOnASecondLink(t, c, w)
}

func TestLinkGivesUpAStreamWithItsContext(t *testing.T) {
	secret := sealing.GenerateKey()
	app := echoApp(t)
	entered, release := make(chan struct{}), make(chan struct{})
	addr, _, _ := serve(t, linkKeys(t, secret), func(ctx context.Context, id string, h agentproto.StreamHeader) (net.Conn, error) {
		if id == "tn_slow" {
			close(entered)
			<-release
			return nil, &agentplane.StreamError{TunnelID: id, Err: agentplane.ErrTunnelOffline}
		}
		return (&net.Dialer{}).DialContext(ctx, "tcp", app)
	})
	defer close(release)
	w := newWire(t, addr)
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.OpenStream(ctx, w.addr, "tn_slow", header("1.tcp.example.com:20001"))
		done <- err
	}()
	<-entered // the holder has the stream: the client waits for its result
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's", err)
	}
	// The link lives on for the other streams.
	st, err := c.OpenStream(context.Background(), w.addr, "tn_1", header("1.tcp.example.com:20001"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := echo(st, bufio.NewReader(st), "still here"); err != nil {
		t.Fatal(err)
	}
	if n := w.accepted.Load(); n > 1 {
		t.Errorf("%d link connections, want 1", n)
	}
}

// TestLinkDuringAKeyRotation: a replica with the new key and the old links both ways with
// one that has the old key only; a replica with neither is refused.
func TestLinkDuringAKeyRotation(t *testing.T) {
	old, current := sealing.GenerateKey(), sealing.GenerateKey()
	rotated := linkKeys(t, current, old)
	stale := linkKeys(t, old)
	app := echoApp(t)
	for _, tc := range []struct {
		name           string
		client, server *sealing.Keyring
	}{
		{"rotated to stale", rotated, stale},
		{"stale to rotated", stale, rotated},
		{"rotated to rotated", rotated, rotated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _, _ := serve(t, tc.server, dialEcho(app))
			c := &cluster.Client{Keys: tc.client}
			defer c.Close()
			st, err := c.OpenStream(context.Background(), addr, "tn_1", header("1.tcp.example.com:20001"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := echo(st, bufio.NewReader(st), "hello"); err != nil {
				t.Fatal(err)
			}
		})
	}
	other := linkKeys(t, sealing.GenerateKey(), sealing.GenerateKey())
	for _, tc := range []struct {
		name           string
		client, server *sealing.Keyring
	}{
		{"another key to rotated", other, rotated},
		{"rotated to another key", rotated, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, asked, _ := serve(t, tc.server, dialEcho(app))
			c := &cluster.Client{Keys: tc.client}
			defer c.Close()
			if _, err := c.OpenStream(context.Background(), addr, "tn_1", header("1.tcp.example.com:20001")); !errors.Is(err, agentplane.ErrTunnelOffline) {
				t.Fatalf("err = %v, want the tunnel offline", err)
			}
			if n := asked.Load(); n != 0 {
				t.Fatalf("the server opened %d streams for a peer without the key", n)
			}
		})
	}
}

func TestLinkRefusesAPlainTCPPeer(t *testing.T) {
	secret := sealing.GenerateKey()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // a version 1 server: its challenge, in clear
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "WCL1"+strings.Repeat("n", 32))
			_ = c.Close()
		}
	}()
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	defer c.Close()
	if _, err := c.OpenStream(context.Background(), ln.Addr().String(), "tn_1", header("1.tcp.example.com:20001")); !errors.Is(err, agentplane.ErrTunnelOffline) {
		t.Fatalf("err = %v, want the tunnel offline", err)
	}
}
