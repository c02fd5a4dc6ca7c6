package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "0.0.0.0": false, "::": false, "100.64.0.1": false,
		"fc00::1": false, "::ffff:127.0.0.1": false, "224.0.0.1": false, "203.0.113.9": false,
		"8.8.8.8": true, "2a00:1450:4001::1": true, "::ffff:8.8.8.8": true,
	} {
		if got := (Guard{}).Allowed(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", addr, got, want)
		}
	}
	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	if !g.Allowed(netip.MustParseAddr("10.9.9.9")) || g.Allowed(netip.MustParseAddr("192.168.0.1")) {
		t.Error("an allowed prefix lets its addresses through and no others")
	}
}

// TestDialRefused: a real dial to a loopback listener is refused before it connects, also
// when reached by a name (the check runs on the resolved address), and allowed by option.
func TestDialRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	d := &net.Dialer{Control: Guard{}.Control}
	for _, addr := range []string{l.Addr().String(), net.JoinHostPort("localhost", port)} {
		_, err := d.DialContext(context.Background(), "tcp", addr)
		if _, ok := errors.AsType[*RefusedError](err); !ok {
			t.Errorf("dial %s: %v, want a RefusedError", addr, err)
		}
	}
	d.Control = Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}.Control
	c, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial allowed loopback: %v", err)
	}
	c.Close()
}
