package agentproto

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// StreamHeaderVersion is the first byte of every visitor stream. A reader refuses any other:
// a new version is for a change old agents cannot read; new members need none, since readers
// ignore members they do not know.
const StreamHeaderVersion = 1

// MaxStreamHeader bounds a stream header's JSON; a header is a few hundred bytes.
const MaxStreamHeader = 4 << 10

// Protos are the protocols a tunnel binds and a visitor stream carries.
var Protos = []string{"http", "https", "tcp", "tls"}

// StreamHeader is what the server writes first on each visitor stream it opens: the version
// byte, the JSON's length (uint16, big-endian), then the JSON. JSON keeps the header
// extensible without a version change (TLS SNI and PROXY protocol requests are to come);
// its cost, once per visitor connection, is small beside the stream's open and close
// (BenchmarkMuxOpenStream).
type StreamHeader struct {
	TunnelID string `json:"tunnel_id"`
	Proto    string `json:"proto"` // one of Protos
	// ClientAddr is the visitor's address as the edge saw it.
	ClientAddr netip.AddrPort `json:"client_addr"`
	// Hostport is the endpoint the visitor reached ("app.example.com:443", "1.tcp.example.com:20001").
	Hostport string `json:"hostport"`
}

// validate refuses a header a reader could not use; the writer checks it too, so it never
// sends one.
func (h StreamHeader) validate() error {
	switch {
	case h.TunnelID == "":
		return errors.New("agentproto: stream header without a tunnel_id")
	case !slices.Contains(Protos, h.Proto):
		return fmt.Errorf("agentproto: stream header proto %q is none of %v", h.Proto, Protos)
	case !h.ClientAddr.IsValid():
		return errors.New("agentproto: stream header without a client_addr")
	}
	if host, port, err := net.SplitHostPort(h.Hostport); err != nil || host == "" || port == "" {
		return fmt.Errorf("agentproto: stream header hostport %q is not host:port", h.Hostport)
	}
	return nil
}

// WriteStreamHeader writes h to w in one Write.
func WriteStreamHeader(w io.Writer, h StreamHeader) error {
	b, err := h.encode()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// encode returns h's bytes on the stream.
func (h StreamHeader) encode() ([]byte, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxStreamHeader {
		return nil, fmt.Errorf("agentproto: stream header of %d bytes exceeds %d", len(data), MaxStreamHeader)
	}
	b := make([]byte, 0, 3+len(data))
	b = append(b, StreamHeaderVersion)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...), nil
}

// ReadStreamHeader reads one header from r, exactly its bytes, so the visitor's bytes follow
// in r. The JSON is read strictly (invalid UTF-8 and duplicate members are refused). The
// caller sets the read deadline: a server that stalls mid-header would otherwise hold it.
func ReadStreamHeader(r io.Reader) (StreamHeader, error) {
	var h StreamHeader
	var pre [3]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return h, fmt.Errorf("agentproto: reading a stream header: %w", err)
	}
	if pre[0] != StreamHeaderVersion {
		return h, fmt.Errorf("agentproto: stream header version %d; this agent reads version %d", pre[0], StreamHeaderVersion)
	}
	n := binary.BigEndian.Uint16(pre[1:])
	if n > MaxStreamHeader {
		return h, fmt.Errorf("agentproto: stream header of %d bytes exceeds %d", n, MaxStreamHeader)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return h, fmt.Errorf("agentproto: reading a stream header: %w", err)
	}
	if err := jsonv2.Unmarshal(data, &h); err != nil {
		return StreamHeader{}, fmt.Errorf("agentproto: stream header: %w", err)
	}
	if err := h.validate(); err != nil {
		return StreamHeader{}, err
	}
	return h, nil
}

// Dial results: the first byte the agent writes on each visitor stream, once it has dialed
// the tunnel's forwards_to (or refused the stream), before any byte of the app. The server
// waits for it, so that a tunnel whose app is down is a connection that could not be made
// (the edge tries the next upstream) rather than one that closes at once. It costs a round
// trip to the agent per new stream; the edge pools the streams of HTTP traffic.
const (
	// StreamConnected: the agent reached the app; the app's bytes follow.
	StreamConnected = 0
	// StreamUnreachable: the agent could not reach the app (dial, TLS handshake, a
	// forwards_to it cannot use).
	StreamUnreachable = 1
	// StreamRefused: the agent refused the stream: its header could not be read, or it names
	// a tunnel the session does not hold. Readers take any code they do not know as this.
	StreamRefused = 2
)

// MaxStreamReason bounds a failure's reason, in bytes.
const MaxStreamReason = 255

// StreamResult is the agent's dial result on a visitor stream: StreamConnected is that one
// byte; a failure's code is followed by the reason's length (one byte) and the reason
// (UTF-8), for the server's log: the visitor never sees it.
type StreamResult struct {
	Code   byte
	Reason string // "" when connected
}

// WriteStreamResult writes r to w in one Write. A reason longer than MaxStreamReason is
// cut at a character's start, and invalid UTF-8 replaced, so that any error's text can be
// sent.
func WriteStreamResult(w io.Writer, r StreamResult) error {
	if r.Code == StreamConnected {
		if r.Reason != "" {
			return errors.New("agentproto: a connected stream result carries no reason")
		}
		_, err := w.Write([]byte{StreamConnected})
		return err
	}
	reason := strings.ToValidUTF8(r.Reason, "\uFFFD")
	if len(reason) > MaxStreamReason {
		cut := MaxStreamReason
		for !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	b := make([]byte, 0, 2+len(reason))
	b = append(b, r.Code, byte(len(reason)))
	_, err := w.Write(append(b, reason...))
	return err
}

// ReadStreamResult reads one dial result from r, exactly its bytes, so the app's bytes
// follow in r; a reason that is not UTF-8 is refused. The caller bounds the wait: an agent
// dials for up to its dial timeout before it answers.
func ReadStreamResult(r io.Reader) (StreamResult, error) {
	var pre [2]byte
	if _, err := io.ReadFull(r, pre[:1]); err != nil {
		return StreamResult{}, fmt.Errorf("agentproto: reading a stream's dial result: %w", err)
	}
	if pre[0] == StreamConnected {
		return StreamResult{Code: StreamConnected}, nil
	}
	if _, err := io.ReadFull(r, pre[1:]); err != nil {
		return StreamResult{}, fmt.Errorf("agentproto: reading a stream's dial result: %w", err)
	}
	reason := make([]byte, pre[1])
	if _, err := io.ReadFull(r, reason); err != nil {
		return StreamResult{}, fmt.Errorf("agentproto: reading a stream's dial result: %w", err)
	}
	if !utf8.Valid(reason) {
		return StreamResult{}, errors.New("agentproto: a stream's dial result gives a reason that is not UTF-8")
	}
	return StreamResult{Code: pre[0], Reason: string(reason)}, nil
}
