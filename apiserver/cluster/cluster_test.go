package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/cluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

var visitor = netip.MustParseAddrPort("203.0.113.7:51234")

func linkKeys(t *testing.T, secret []byte, previous ...[]byte) *sealing.Keyring {
	t.Helper()
	ring, err := sealing.NewKeyring(secret, previous...)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cluster.KeysFor(ring)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// echoApp is an app on loopback that sends back each line it reads.
func echoApp(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// serve starts a link server whose Open is open, and returns its address and the number of
// streams it was asked to open.
func serve(t *testing.T, keys *sealing.Keyring, open func(context.Context, string, agentproto.StreamHeader) (net.Conn, error)) (string, *atomic.Int32, *cluster.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	s := &cluster.Server{Keys: keys, Open: func(ctx context.Context, id string, h agentproto.StreamHeader) (net.Conn, error) {
		asked.Add(1)
		return open(ctx, id, h)
	}}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = ln.Close(); s.Close() })
	return ln.Addr().String(), &asked, s
}

func TestLinkForwardsAStream(t *testing.T) {
	secret := sealing.GenerateKey()
	app := echoApp(t)
	var got agentproto.StreamHeader
	addr, _, _ := serve(t, linkKeys(t, secret), func(ctx context.Context, id string, h agentproto.StreamHeader) (net.Conn, error) {
		got = h
		return (&net.Dialer{}).DialContext(ctx, "tcp", app)
	})
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	st, err := c.OpenStream(context.Background(), addr, "tn_1", agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: "1.tcp.example.com:20001"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := io.WriteString(st, "hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(st).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	if got.TunnelID != "tn_1" || got.Proto != "tcp" || got.Hostport != "1.tcp.example.com:20001" {
		t.Fatalf("header at the holder: %+v", got)
	}
}

func TestLinkRefusesAPeerWithoutTheKey(t *testing.T) {
	addr, asked, _ := serve(t, linkKeys(t, sealing.GenerateKey()), func(context.Context, string, agentproto.StreamHeader) (net.Conn, error) {
		return nil, errors.New("not reached")
	})
	c := &cluster.Client{Keys: linkKeys(t, sealing.GenerateKey())}
	_, err := c.OpenStream(context.Background(), addr, "tn_1", agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: "1.tcp.example.com:20001"})
	if !errors.Is(err, agentplane.ErrTunnelOffline) {
		t.Fatalf("err = %v, want the tunnel offline", err)
	}
	// A peer that skips the handshake and sends a stream header straight away.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := agentproto.WriteStreamHeader(conn, agentproto.StreamHeader{TunnelID: "tn_1", Proto: "tcp", ClientAddr: visitor, Hostport: "1.tcp.example.com:20001"}); err != nil {
		t.Fatal(err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadAll(conn); err != nil { // the server closes the link
		t.Fatal(err)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the server opened %d streams for unauthenticated peers", n)
	}
}

func TestLinkPassesTheHoldersRefusal(t *testing.T) {
	secret := sealing.GenerateKey()
	for _, want := range []error{agentplane.ErrTunnelOffline, agentplane.ErrSessionEnded, agentplane.ErrUpstreamUnreachable, agentplane.ErrStreamRefused} {
		addr, _, _ := serve(t, linkKeys(t, secret), func(_ context.Context, id string, _ agentproto.StreamHeader) (net.Conn, error) {
			return nil, &agentplane.StreamError{TunnelID: id, Err: want}
		})
		c := &cluster.Client{Keys: linkKeys(t, secret)}
		_, err := c.OpenStream(context.Background(), addr, "tn_1", agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: "1.tcp.example.com:20001"})
		if want == agentplane.ErrSessionEnded {
			want = agentplane.ErrTunnelOffline // the holder no longer has it: the same to the client
		}
		if !errors.Is(err, want) {
			t.Errorf("err = %v, want %v", err, want)
		}
	}
}

func TestLinkEndsStreamsWhenTheHolderCloses(t *testing.T) {
	secret := sealing.GenerateKey()
	app := echoApp(t)
	addr, _, s := serve(t, linkKeys(t, secret), func(ctx context.Context, _ string, _ agentproto.StreamHeader) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", app)
	})
	c := &cluster.Client{Keys: linkKeys(t, secret)}
	st, err := c.OpenStream(context.Background(), addr, "tn_1", agentproto.StreamHeader{Proto: "tcp", ClientAddr: visitor, Hostport: "1.tcp.example.com:20001"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s.Close()
	if _, err := io.ReadAll(st); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("read after close: %v", err) // a reset is an end too
	}
}

func TestLinkNeedsTheSecretKey(t *testing.T) {
	if _, err := cluster.KeysFor(nil); err == nil {
		t.Fatal("no error without a secret key")
	}
}
