package proxyproto

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// sig is the signature as the specification prints it.
const sig = "0d0a0d0a000d0a515549540a"

// unhex decodes a vector written with spaces between its fields.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// vectors are headers worked out by hand from proxy-protocol.txt section 2.2.
var vectors = []struct {
	name  string
	h     Header
	bytes string
}{
	{
		// The specification's version 1 example, "PROXY TCP4 192.168.0.1 192.168.0.11 56324 443".
		name:  "tcp4",
		h:     Header{Command: Proxy, Source: netip.MustParseAddrPort("192.168.0.1:56324"), Destination: netip.MustParseAddrPort("192.168.0.11:443")},
		bytes: sig + " 21 11 000c c0a80001 c0a8000b dc04 01bb",
	},
	{
		name:  "tcp6",
		h:     Header{Command: Proxy, Source: netip.MustParseAddrPort("[2001:db8::1]:1234"), Destination: netip.MustParseAddrPort("[2001:db8::2]:443")},
		bytes: sig + " 21 21 0024 20010db8000000000000000000000001 20010db8000000000000000000000002 04d2 01bb",
	},
	{
		name:  "local",
		h:     Header{Command: Local},
		bytes: sig + " 20 00 0000",
	},
	{
		// PP2_TYPE_AUTHORITY (0x02) "a.io", then an empty PP2_TYPE_NOOP (0x04).
		name: "tcp4 with TLVs",
		h: Header{Command: Proxy, Source: netip.MustParseAddrPort("10.0.0.1:1"), Destination: netip.MustParseAddrPort("10.0.0.2:2"),
			TLVs: []TLV{{Type: 0x02, Value: []byte("a.io")}, {Type: 0x04, Value: []byte{}}}},
		bytes: sig + " 21 11 0016 0a000001 0a000002 0001 0002 02 0004 612e696f 04 0000",
	},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			want := unhex(t, v.bytes)
			got, err := v.h.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("MarshalBinary:\n got %x\nwant %x", got, want)
			}
			// Parse reads the header and leaves the payload after it.
			r := bytes.NewReader(append(want, "GET / HTTP/1.1\r\n"...))
			h, err := Parse(r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, v.h) {
				t.Fatalf("Parse = %+v, want %+v", h, v.h)
			}
			if rest, _ := io.ReadAll(r); string(rest) != "GET / HTTP/1.1\r\n" {
				t.Fatalf("Parse left %q", rest)
			}
		})
	}
}

// TestMixedFamilies: IPv4-mapped addresses are written as IPv4 when both ends are IPv4, and
// an IPv4 end beside an IPv6 one is written mapped.
func TestMixedFamilies(t *testing.T) {
	for _, c := range []struct {
		src, dst           string
		wantSrc, wantDst   string
		wantFamily, wantLn byte
	}{
		{"[::ffff:192.0.2.1]:1000", "192.0.2.2:80", "192.0.2.1:1000", "192.0.2.2:80", familyTCP4, tcp4Len},
		{"192.0.2.1:1000", "[2001:db8::2]:80", "[::ffff:192.0.2.1]:1000", "[2001:db8::2]:80", familyTCP6, tcp6Len},
		{"[fe80::1%eth0]:1000", "[fe80::2]:80", "[fe80::1]:1000", "[fe80::2]:80", familyTCP6, tcp6Len},
	} {
		b, err := Header{Command: Proxy, Source: netip.MustParseAddrPort(c.src), Destination: netip.MustParseAddrPort(c.dst)}.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if b[13] != c.wantFamily || int(b[15]) != int(c.wantLn) {
			t.Errorf("%s -> %s: family %#02x length %d, want %#02x %d", c.src, c.dst, b[13], b[15], c.wantFamily, c.wantLn)
		}
		h, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if h.Source.String() != c.wantSrc || h.Destination.String() != c.wantDst {
			t.Errorf("%s -> %s parsed as %s -> %s, want %s -> %s", c.src, c.dst, h.Source, h.Destination, c.wantSrc, c.wantDst)
		}
	}
}

func TestMarshalRefuses(t *testing.T) {
	addr := netip.MustParseAddrPort("192.0.2.1:1")
	for name, c := range map[string]struct {
		h    Header
		want string
	}{
		"proxy without source":  {Header{Command: Proxy, Destination: addr}, "needs a source"},
		"proxy without either":  {Header{Command: Proxy}, "needs a source"},
		"local with an address": {Header{Command: Local, Source: addr}, "carries no addresses"},
		"unknown command":       {Header{Command: 2}, "unknown command"},
		"TLVs too long":         {Header{Command: Local, TLVs: []TLV{{Value: make([]byte, 0xFFFF)}}}, "exceed the 65535"},
	} {
		if _, err := c.h.MarshalBinary(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		hex  string
		want string
	}{
		"empty":                   {"", "reading the header: EOF"},
		"partial fixed part":      {sig + " 21", "unexpected EOF"},
		"version 1 text":          {hex.EncodeToString([]byte("PROXY TCP4 192.168.0.1 ")), "not a PROXY protocol version 2"},
		"version 1 in the nibble": {sig + " 11 11 000c", "version 1, want 2"},
		"unknown command":         {sig + " 22 11 0000", "unknown command 0x2"},
		"UDP over IPv4":           {sig + " 21 12 000c 00000000 00000000 0000 0000", "unsupported address family and transport 0x12"},
		"AF_UNIX":                 {sig + " 21 31 0000", "unsupported address family"},
		"unknown family":          {sig + " 21 41 0000", "unsupported address family"},
		"proxy unspec":            {sig + " 21 00 0000", "without an address family"},
		"addresses too short":     {sig + " 21 11 000b 0a000001 0a000002 0001 00", "11 bytes cannot hold the 12"},
		"IPv6 addresses short":    {sig + " 21 21 000c 0a000001 0a000002 0001 0002", "12 bytes cannot hold the 36"},
		"partial addresses":       {sig + " 21 11 000c 0a000001", "unexpected EOF"},
		"trailing byte":           {sig + " 20 00 0001 04", "1 trailing bytes are too few"},
		"TLV overrun":             {sig + " 20 00 0005 02 0003 6161", "TLV type 0x02 of 3 bytes overruns"},
	} {
		_, err := Parse(bytes.NewReader(unhex(t, c.hex)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

// TestParseLocalSkipsAddresses: a LOCAL header's address block is read past, whatever its
// family, and its TLVs still read.
func TestParseLocalSkipsAddresses(t *testing.T) {
	h, err := Parse(bytes.NewReader(unhex(t, sig+" 20 11 000f 0a000001 0a000002 0001 0002 04 0000")))
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Command: Local, TLVs: []TLV{{Type: 0x04, Value: []byte{}}}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("Parse = %+v, want %+v", h, want)
	}
}

// FuzzParse: Parse reads exactly the declared header and no more, and what it accepts
// encodes to a header that parses back to the same value.
func FuzzParse(f *testing.F) {
	for _, v := range vectors {
		f.Add(unhex(f, v.bytes))
	}
	f.Add(unhex(f, sig+" 20 11 000f 0a000001 0a000002 0001 0002 04 0000"))
	f.Add(unhex(f, sig+" 21 21 0024 00000000000000000000ffff0a000001 20010db8000000000000000000000002 04d2 01bb ffff"))
	f.Add(unhex(f, sig+" 21 11 0005 02 0003 6161"))
	f.Add([]byte("PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := Parse(r)
		if err != nil {
			return
		}
		if consumed := len(data) - r.Len(); consumed != fixedLen+int(data[14])<<8+int(data[15]) {
			t.Fatalf("Parse consumed %d bytes of a header declaring %d", consumed, fixedLen+int(data[14])<<8+int(data[15]))
		}
		b, err := h.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary(%+v) after Parse: %v", h, err)
		}
		h2, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("Parse(MarshalBinary(%+v)) = %v", h, err)
		}
		if h.Command != h2.Command || h.Source.Addr().Unmap() != h2.Source.Addr().Unmap() || h.Destination.Addr().Unmap() != h2.Destination.Addr().Unmap() ||
			h.Source.Port() != h2.Source.Port() || h.Destination.Port() != h2.Destination.Port() || !reflect.DeepEqual(h.TLVs, h2.TLVs) {
			t.Fatalf("round trip: %+v became %+v", h, h2)
		}
		if b2, _ := h2.MarshalBinary(); !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable: %x then %x", b, b2)
		}
	})
}
