// Package netguard keeps dials away from the server's own networks: a net.Dialer whose
// Control refuses loopback, link-local, private, unspecified and other non-public
// destinations unless an operator allowed them. Control sees the address actually dialed,
// after DNS resolution, so a name that resolves to a refused address (DNS rebinding
// included) is refused too.
package netguard

import (
	"fmt"
	"net/netip"
	"syscall"
)

// RefusedError is a dial to a destination the guard refuses.
type RefusedError struct{ Addr netip.Addr }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("netguard: the destination %s is not a public address", e.Addr)
}

// Guard decides which destination addresses a dial may reach.
type Guard struct {
	// Allow are the prefixes allowed although not public (e.g. an operator's private
	// network where its static backends live).
	Allow []netip.Prefix
}

// Allowed reports whether a dial may reach addr.
func (g Guard) Allowed(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range g.Allow {
		if p.Contains(addr) {
			return true
		}
	}
	return public(addr)
}

// public: a global unicast address outside the private, shared and documentation ranges.
func public(a netip.Addr) bool {
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// nonPublic are the special ranges IsGlobalUnicast and IsPrivate let through (RFC 6890).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // this network
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// Control is a net.Dialer Control that refuses the destinations Allowed refuses.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: %s: %w", address, err)
	}
	if !g.Allowed(ap.Addr()) {
		return &RefusedError{Addr: ap.Addr()}
	}
	return nil
}
