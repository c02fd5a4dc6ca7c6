package agentproto

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/netip"
	"strings"
	"testing"
)

// frameHeader builds a stream header's bytes by hand: version, length, JSON.
func frameHeader(version byte, json string) []byte {
	b := []byte{version}
	b = binary.BigEndian.AppendUint16(b, uint16(len(json)))
	return append(b, json...)
}

const goodHeaderJSON = `{"tunnel_id":"tn_1","proto":"tls","client_addr":"203.0.113.7:51234","hostport":"app.example.com:443"}`

func TestStreamHeaderRoundTrip(t *testing.T) {
	for _, h := range []StreamHeader{
		header(0),
		{TunnelID: "tn_2", Proto: "tcp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:1"), Hostport: "1.tcp.example.com:20001"},
		{TunnelID: "tn_3", Proto: "https", ClientAddr: netip.MustParseAddrPort("[fe80::1%eth0]:443"), Hostport: "[2001:db8::1]:443"},
	} {
		var buf bytes.Buffer
		if err := WriteStreamHeader(&buf, h); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("visitor bytes")
		got, err := ReadStreamHeader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got != h {
			t.Fatalf("read %+v, want %+v", got, h)
		}
		if rest := buf.String(); rest != "visitor bytes" {
			t.Fatalf("ReadStreamHeader left %q", rest)
		}
	}
}

// TestStreamHeaderWire pins the bytes on the wire: a version byte, a big-endian length,
// JSON with these member names.
func TestStreamHeaderWire(t *testing.T) {
	var buf bytes.Buffer
	h := StreamHeader{TunnelID: "tn_1", Proto: "tls", ClientAddr: netip.MustParseAddrPort("203.0.113.7:51234"), Hostport: "app.example.com:443"}
	if err := WriteStreamHeader(&buf, h); err != nil {
		t.Fatal(err)
	}
	if want := frameHeader(1, goodHeaderJSON); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("wrote %q, want %q", buf.Bytes(), want)
	}
}

func TestStreamHeaderRefusals(t *testing.T) {
	long := `{"tunnel_id":"` + strings.Repeat("t", MaxStreamHeader) + `"}`
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":             {nil, "reading a stream header: EOF"},
		"cut in the length": {[]byte{1, 0}, "unexpected EOF"},
		"cut in the JSON":   {frameHeader(1, goodHeaderJSON)[:20], "unexpected EOF"},
		"version 2":         {frameHeader(2, goodHeaderJSON), "stream header version 2; this agent reads version 1"},
		"too long":          {frameHeader(1, long), "bytes exceeds 4096"},
		"not JSON":          {frameHeader(1, "tn_1 tls"), "stream header: jsontext: invalid character"},
		"not an object":     {frameHeader(1, `["tn_1"]`), "unmarshal JSON array into Go agentproto.StreamHeader"},
		"invalid UTF-8":     {frameHeader(1, strings.Replace(goodHeaderJSON, "tn_1", "tn_\xff", 1)), "invalid UTF-8"},
		"lone surrogate":    {frameHeader(1, strings.Replace(goodHeaderJSON, "tn_1", `tn_\ud800`, 1)), "invalid surrogate"},
		"duplicate member":  {frameHeader(1, strings.Replace(goodHeaderJSON, `"proto":"tls"`, `"proto":"tls","proto":"tcp"`, 1)), "duplicate object member name"},
		"no tunnel":         {frameHeader(1, strings.Replace(goodHeaderJSON, `"tn_1"`, `""`, 1)), "without a tunnel_id"},
		"unknown proto":     {frameHeader(1, strings.Replace(goodHeaderJSON, `"tls"`, `"udp"`, 1)), `proto "udp" is none of`},
		"no client":         {frameHeader(1, strings.Replace(goodHeaderJSON, `"203.0.113.7:51234"`, `""`, 1)), "without a client_addr"},
		"bad client":        {frameHeader(1, strings.Replace(goodHeaderJSON, `"203.0.113.7:51234"`, `"203.0.113.7"`, 1)), "client_addr"},
		"no port":           {frameHeader(1, strings.Replace(goodHeaderJSON, `"app.example.com:443"`, `"app.example.com"`, 1)), `hostport "app.example.com" is not host:port`},
		"empty host":        {frameHeader(1, strings.Replace(goodHeaderJSON, `"app.example.com:443"`, `":443"`, 1)), "is not host:port"},
		"null":              {frameHeader(1, "null"), "without a tunnel_id"},
	} {
		_, err := ReadStreamHeader(bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}

	// The writer refuses what the reader would.
	for _, h := range []StreamHeader{
		{},
		{TunnelID: "tn_1", Proto: "udp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:1"), Hostport: "a:1"},
		{TunnelID: "tn_1", Proto: "tcp", Hostport: "a:1"},
		{TunnelID: "tn_1", Proto: "tcp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:1"), Hostport: "a"},
		{TunnelID: strings.Repeat("t", MaxStreamHeader), Proto: "tcp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:1"), Hostport: "a:1"},
	} {
		var buf bytes.Buffer
		if err := WriteStreamHeader(&buf, h); err == nil || buf.Len() != 0 {
			t.Errorf("WriteStreamHeader(%+v): %v, wrote %d bytes", h, err, buf.Len())
		}
	}
}

// TestStreamHeaderIgnoresUnknownMembers: members added later do not break older readers.
func TestStreamHeaderIgnoresUnknownMembers(t *testing.T) {
	data := frameHeader(1, strings.Replace(goodHeaderJSON, `{`, `{"sni":"app.example.com","proxy_protocol":true,`, 1))
	h, err := ReadStreamHeader(bytes.NewReader(data))
	if err != nil || h.TunnelID != "tn_1" {
		t.Fatalf("%+v, %v", h, err)
	}
}

// FuzzReadStreamHeader: ReadStreamHeader reads exactly the declared header, and what it
// accepts writes back to a header that reads the same.
func FuzzReadStreamHeader(f *testing.F) {
	f.Add(frameHeader(1, goodHeaderJSON))
	f.Add(frameHeader(1, goodHeaderJSON+"trailing"))
	f.Add(frameHeader(1, `{"tunnel_id":"tn_1","proto":"tcp","client_addr":"[::ffff:1.2.3.4]:5","hostport":"[::1]:6","x":[1,{}]}`))
	f.Add(frameHeader(1, `{"tunnel_id":"tn_1","tunnel_id":"tn_2"}`))
	f.Add(frameHeader(2, goodHeaderJSON))
	f.Add(frameHeader(1, "{}"))
	f.Add([]byte{1, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := ReadStreamHeader(r)
		if err != nil {
			return
		}
		if consumed := len(data) - r.Len(); consumed != 3+int(binary.BigEndian.Uint16(data[1:3])) {
			t.Fatalf("consumed %d bytes of a %d-byte header", consumed, 3+int(binary.BigEndian.Uint16(data[1:3])))
		}
		var buf bytes.Buffer
		if err := WriteStreamHeader(&buf, h); err != nil {
			t.Fatalf("WriteStreamHeader(%+v) of a header read: %v", h, err)
		}
		back, err := ReadStreamHeader(&buf)
		if err != nil || back != h {
			t.Fatalf("%+v read back as %+v, %v", h, back, err)
		}
	})
}

// BenchmarkStreamHeader: a header written and read back, the JSON's share of a stream's
// open (BenchmarkMuxOpenStream).
func BenchmarkStreamHeader(b *testing.B) {
	h := header(0)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteStreamHeader(&buf, h); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadStreamHeader(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStreamResultWire pins the bytes on the wire and reads each back, the app's bytes
// left in the reader.
func TestStreamResultWire(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes: cut to 254, at a character's start
	for _, c := range []struct {
		r    StreamResult
		wire []byte
		read StreamResult
	}{
		{StreamResult{Code: StreamConnected}, []byte{0}, StreamResult{Code: StreamConnected}},
		{StreamResult{Code: StreamUnreachable, Reason: "connection refused"}, append([]byte{1, 18}, "connection refused"...), StreamResult{Code: StreamUnreachable, Reason: "connection refused"}},
		{StreamResult{Code: StreamRefused}, []byte{2, 0}, StreamResult{Code: StreamRefused}},
		{StreamResult{Code: StreamRefused, Reason: "bad \xff byte"}, append([]byte{2, 12}, "bad \uFFFD byte"...), StreamResult{Code: StreamRefused, Reason: "bad \uFFFD byte"}},
		{StreamResult{Code: StreamUnreachable, Reason: long}, append([]byte{1, 254}, long[:254]...), StreamResult{Code: StreamUnreachable, Reason: long[:254]}},
	} {
		var buf bytes.Buffer
		if err := WriteStreamResult(&buf, c.r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), c.wire) {
			t.Errorf("%+v wrote %q, want %q", c.r, buf.Bytes(), c.wire)
		}
		buf.WriteString("app bytes")
		got, err := ReadStreamResult(&buf)
		if err != nil || got != c.read {
			t.Errorf("%+v read back as %+v, %v; want %+v", c.r, got, err, c.read)
		}
		if rest := buf.String(); rest != "app bytes" {
			t.Errorf("ReadStreamResult left %q", rest)
		}
	}

	// A code this reader does not know is read as a failure with its reason.
	got, err := ReadStreamResult(bytes.NewReader([]byte{9, 3, 'n', 'e', 'w'}))
	if err != nil || got != (StreamResult{Code: 9, Reason: "new"}) {
		t.Errorf("an unknown code read as %+v, %v", got, err)
	}
	if err := WriteStreamResult(io.Discard, StreamResult{Code: StreamConnected, Reason: "why"}); err == nil {
		t.Error("a connected result with a reason was written")
	}
}

func TestStreamResultRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "reading a stream's dial result: EOF"},
		"no length":      {[]byte{1}, "reading a stream's dial result: EOF"},
		"cut in reason":  {[]byte{1, 5, 'a', 'b'}, "unexpected EOF"},
		"invalid UTF-8":  {[]byte{1, 2, 0xc3, 0x28}, "not UTF-8"},
		"lone surrogate": {[]byte{1, 3, 0xed, 0xa0, 0x80}, "not UTF-8"},
	} {
		_, err := ReadStreamResult(bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, c.want)
		}
	}
}

// FuzzReadStreamResult: ReadStreamResult reads exactly the result's bytes, and what it
// accepts writes back to the same bytes.
func FuzzReadStreamResult(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{0, 'a', 'p', 'p'})
	f.Add(append([]byte{1, 18}, "connection refused"...))
	f.Add([]byte{2, 0, 'x'})
	f.Add([]byte{1, 2, 0xc3, 0x28})
	f.Add([]byte{255, 255})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		res, err := ReadStreamResult(r)
		if err != nil {
			return
		}
		consumed := data[:len(data)-r.Len()]
		var buf bytes.Buffer
		if err := WriteStreamResult(&buf, res); err != nil {
			t.Fatalf("WriteStreamResult(%+v) of a result read: %v", res, err)
		}
		if !bytes.Equal(buf.Bytes(), consumed) {
			t.Fatalf("%+v read from %q writes back as %q", res, consumed, buf.Bytes())
		}
	})
}
