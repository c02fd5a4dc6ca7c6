package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

func testCredentials(t *testing.T) (*sealing.Keyring, *credentials) {
	t.Helper()
	ring, err := sealing.NewKeyring(sealing.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := KeysFor(ring)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := newCredentials(keys)
	if err != nil {
		t.Fatal(err)
	}
	return keys, creds
}

// TestServerRefusesAClientWithAnotherKey: a client that would accept the server but holds
// another key gets no stream.
func TestServerRefusesAClientWithAnotherKey(t *testing.T) {
	keys, _ := testCredentials(t)
	_, other := testCredentials(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	s := &Server{Keys: keys, Open: func(context.Context, string, agentproto.StreamHeader) (net.Conn, error) {
		asked.Add(1)
		return nil, errors.New("not reached")
	}}
	go func() { _ = s.Serve(ln) }()
	defer s.Close()
	defer ln.Close()
	cfg := other.clients[0].Clone()
	cfg.InsecureSkipVerify = true // trusts any server: a test peer only
	conn, err := tls.Dial("tcp", ln.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err) // TLS 1.3: the client is done before the server checks its certificate
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("anything"))
	if _, err := io.ReadAll(conn); err == nil {
		t.Fatal("the server let the client in")
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the server opened %d streams", n)
	}
}

// TestClientRefusesAServerWithAnotherKey: a server that would accept the client but holds
// another key is sent no stream.
func TestClientRefusesAServerWithAnotherKey(t *testing.T) {
	keys, _ := testCredentials(t)
	_, other := testCredentials(t)
	cfg := other.server.Clone()
	cfg.ClientAuth = tls.RequireAnyClientCert // trusts any client
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		b, _ := io.ReadAll(conn)
		got <- len(b)
	}()
	c := &Client{Keys: keys}
	defer c.Close()
	_, err = c.OpenStream(context.Background(), ln.Addr().String(), "tn_1", agentproto.StreamHeader{Proto: "tcp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:51234"), Hostport: "1.tcp.example.com:20001"})
	if !errors.Is(err, agentplane.ErrTunnelOffline) {
		t.Fatalf("err = %v, want the tunnel offline", err)
	}
	var se *agentplane.StreamError
	if !errors.As(err, &se) || !errors.Is(se.Cause, ErrUnauthenticated) {
		t.Fatalf("err = %v, want the server unauthenticated", err)
	}
	if n := <-got; n != 0 {
		t.Fatalf("the server read %d bytes of the link", n)
	}
}
