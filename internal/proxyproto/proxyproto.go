// Package proxyproto writes and reads PROXY protocol version 2 headers (haproxy's
// proxy-protocol.txt, section 2.2): the binary block an agent may put before the bytes of a
// TCP connection it forwards upstream, so the upstream learns the visitor's address.
//
// Only what Warren forwards is supported: TCP over IPv4 and IPv6 with the PROXY command, and
// the LOCAL command (a connection of the proxy's own, such as a health check). Parse is
// strict: it accepts exactly what the specification lets a sender emit for those, and refuses
// everything else, so tests can check what an agent sent byte for byte.
package proxyproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// signature opens every version 2 header; its NUL and CRLFs make it invalid in the
// protocols an upstream may expect instead.
var signature = [12]byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A}

// Command is the low nibble of the version-and-command byte.
type Command byte

const (
	// Local: the proxy's own connection; the receiver uses the real endpoints.
	Local Command = 0x0
	// Proxy: a relayed connection; the header carries its original endpoints.
	Proxy Command = 0x1
)

const (
	version2 = 0x20 // high nibble of the version-and-command byte

	// Address family (high nibble) and transport (low nibble).
	familyUnspec = 0x00
	familyTCP4   = 0x11
	familyTCP6   = 0x21

	fixedLen = 16         // signature, version and command, family, length
	tcp4Len  = 2*4 + 2*2  // two IPv4 addresses, two ports
	tcp6Len  = 2*16 + 2*2 // two IPv6 addresses, two ports
	tlvLen   = 3          // a TLV's type and length
)

// Header is one version 2 header.
type Header struct {
	Command Command
	// Source and Destination are the relayed connection's endpoints (Proxy only). Both are
	// written as IPv4 when both are IPv4 or IPv4-mapped IPv6, else both as IPv6; an IPv6 zone
	// cannot be carried and is dropped.
	Source, Destination netip.AddrPort
	// TLVs are the type-length-value vectors after the addresses, in order.
	TLVs []TLV
}

// TLV is one type-length-value vector (for example type 0x02, the authority: TLS SNI).
type TLV struct {
	Type  byte
	Value []byte
}

// MarshalBinary encodes h; it refuses what a receiver must refuse.
func (h Header) MarshalBinary() ([]byte, error) {
	var family byte
	var addrs []byte
	switch h.Command {
	case Local:
		if h.Source.IsValid() || h.Destination.IsValid() {
			return nil, errors.New("proxyproto: a LOCAL header carries no addresses")
		}
		family = familyUnspec
	case Proxy:
		if !h.Source.IsValid() || !h.Destination.IsValid() {
			return nil, fmt.Errorf("proxyproto: a PROXY header needs a source and a destination address and port (got %v and %v)", h.Source, h.Destination)
		}
		src, dst := h.Source.Addr().Unmap(), h.Destination.Addr().Unmap()
		if src.Is4() && dst.Is4() {
			family = familyTCP4
			addrs = append(append(addrs, src.AsSlice()...), dst.AsSlice()...)
		} else {
			family = familyTCP6
			s16, d16 := src.As16(), dst.As16()
			addrs = append(append(addrs, s16[:]...), d16[:]...)
		}
		addrs = binary.BigEndian.AppendUint16(addrs, h.Source.Port())
		addrs = binary.BigEndian.AppendUint16(addrs, h.Destination.Port())
	default:
		return nil, fmt.Errorf("proxyproto: unknown command %#x", byte(h.Command))
	}
	n := len(addrs)
	for _, t := range h.TLVs {
		n += tlvLen + len(t.Value)
	}
	if n > 0xFFFF {
		return nil, fmt.Errorf("proxyproto: %d bytes of addresses and TLVs exceed the 65535 a header can hold", n)
	}
	b := make([]byte, 0, fixedLen+n)
	b = append(b, signature[:]...)
	b = append(b, version2|byte(h.Command), family)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, addrs...)
	for _, t := range h.TLVs {
		b = append(b, t.Type)
		b = binary.BigEndian.AppendUint16(b, uint16(len(t.Value)))
		b = append(b, t.Value...)
	}
	return b, nil
}

// Parse reads one header from r, exactly its bytes and no more, so what follows stays in r
// for the connection's payload. A LOCAL header's address block is skipped whatever its
// family; a PROXY header must be TCP over IPv4 or IPv6. Set a read deadline on a connection
// first: a peer that sends part of a header would otherwise hold Parse.
func Parse(r io.Reader) (Header, error) {
	var fixed [fixedLen]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return Header{}, fmt.Errorf("proxyproto: reading the header: %w", err)
	}
	if [12]byte(fixed[:12]) != signature {
		return Header{}, errors.New("proxyproto: not a PROXY protocol version 2 header")
	}
	if v := fixed[12] & 0xF0; v != version2 {
		return Header{}, fmt.Errorf("proxyproto: version %d, want 2", v>>4)
	}
	h := Header{Command: Command(fixed[12] & 0x0F)}
	if h.Command != Local && h.Command != Proxy {
		return Header{}, fmt.Errorf("proxyproto: unknown command %#x", byte(h.Command))
	}
	family := fixed[13]
	body := make([]byte, binary.BigEndian.Uint16(fixed[14:]))
	if _, err := io.ReadFull(r, body); err != nil {
		return Header{}, fmt.Errorf("proxyproto: reading %d bytes of addresses and TLVs: %w", len(body), err)
	}

	var addrLen int
	switch family {
	case familyUnspec:
	case familyTCP4:
		addrLen = tcp4Len
	case familyTCP6:
		addrLen = tcp6Len
	default:
		return Header{}, fmt.Errorf("proxyproto: unsupported address family and transport %#02x", family)
	}
	if len(body) < addrLen {
		return Header{}, fmt.Errorf("proxyproto: %d bytes cannot hold the %d of family %#02x's addresses", len(body), addrLen, family)
	}
	// A LOCAL header's address block is skipped: the receiver uses the real endpoints.
	if h.Command == Proxy {
		if family == familyUnspec {
			return Header{}, errors.New("proxyproto: a PROXY header without an address family")
		}
		h.Source, h.Destination = addrPorts(body[:addrLen])
	}

	for rest := body[addrLen:]; len(rest) > 0; {
		if len(rest) < tlvLen {
			return Header{}, fmt.Errorf("proxyproto: %d trailing bytes are too few for a TLV", len(rest))
		}
		n := int(binary.BigEndian.Uint16(rest[1:3]))
		if len(rest) < tlvLen+n {
			return Header{}, fmt.Errorf("proxyproto: TLV type %#02x of %d bytes overruns the header", rest[0], n)
		}
		h.TLVs = append(h.TLVs, TLV{Type: rest[0], Value: rest[tlvLen : tlvLen+n : tlvLen+n]})
		rest = rest[tlvLen+n:]
	}
	return h, nil
}

// addrPorts decodes a TCP4 or TCP6 address block: both addresses, then both ports.
func addrPorts(block []byte) (src, dst netip.AddrPort) {
	size := (len(block) - 4) / 2
	s, _ := netip.AddrFromSlice(block[:size])
	d, _ := netip.AddrFromSlice(block[size : 2*size])
	ports := block[2*size:]
	return netip.AddrPortFrom(s, binary.BigEndian.Uint16(ports)), netip.AddrPortFrom(d, binary.BigEndian.Uint16(ports[2:]))
}
