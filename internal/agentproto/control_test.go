package agentproto

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// rawFrame is one control frame built by hand.
func rawFrame(payload string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...)
}

// pipe is a ControlConn reading from the far end of an in-memory connection, which the
// test writes raw bytes to.
func pipe(t *testing.T) (*ControlConn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() {
		_ = a.Close()
		_ = b.Close()
	})
	return NewControlConn(a), b
}

// send writes raw bytes to the far end without blocking the test.
func send(t *testing.T, far net.Conn, data ...[]byte) {
	go func() {
		for _, d := range data {
			if _, err := far.Write(d); err != nil {
				return // the test closed the pipe
			}
		}
	}()
}

// TestControlWire pins a frame: the length, then the message as version 1 encodes it.
func TestControlWire(t *testing.T) {
	c, far := pipe(t)
	m := Message{Type: TypeBind, ID: "b1", Proto: "https", Hostname: "app.example.com"}
	done := make(chan error, 1)
	go func() { done <- c.Write(t.Context(), m) }()
	want, _ := json.Marshal(m)
	got := make([]byte, 4+len(want))
	if _, err := io.ReadFull(far, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, rawFrame(string(want))) {
		t.Fatalf("frame %q, want %q", got, rawFrame(string(want)))
	}
	if string(want) != `{"type":"bind","id":"b1","proto":"https","hostname":"app.example.com"}` {
		t.Fatalf("JSON %s", want)
	}
}

// TestControlMalformed: a whole frame that is not a message is ErrMalformed and the next
// frame reads; a frame too long is ErrMalformed for good.
func TestControlMalformed(t *testing.T) {
	c, far := pipe(t)
	ctx := t.Context()
	send(t, far,
		rawFrame("{\"type\":\"hello\",\"agent_version\":\"\xff\"}"),
		rawFrame(`{"type":"hello","agent_version":"\ud800"}`),
		rawFrame(`{"type":"hello","type":"bind"}`),
		rawFrame(`hello`),
		rawFrame(``),
		rawFrame(`{"type":"heartbeat","id":"h1","added_later":{"x":1}}`),
		binary.BigEndian.AppendUint32(nil, MaxMessage+1),
	)
	for _, want := range []string{"invalid UTF-8", "invalid surrogate", "duplicate object member name", "invalid character", "unexpected EOF"} {
		if _, err := c.Read(ctx); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Read: %v, want ErrMalformed mentioning %q", err, want)
		}
	}
	if m, err := c.Read(ctx); err != nil || m.Type != TypeHeartbeat || m.ID != "h1" {
		t.Fatalf("after malformed frames: %+v, %v", m, err)
	}
	_, err := c.Read(ctx)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "a frame of 1048577 bytes exceeds 1048576") {
		t.Fatalf("an oversized frame: %v", err)
	}
	send(t, far, rawFrame(`{"type":"heartbeat"}`))
	if _, again := c.Read(ctx); again != err {
		t.Fatalf("after an oversized frame, Read: %v, want the same error %v", again, err)
	}
}

func TestControlWriteRefusesOversize(t *testing.T) {
	c, _ := pipe(t)
	err := c.Write(t.Context(), Message{Type: TypeHello, Metadata: strings.Repeat("m", MaxMessage)})
	if err == nil || !strings.Contains(err.Error(), "exceeds 1048576") {
		t.Fatalf("Write: %v", err)
	}
	if c.writeErr != nil {
		t.Fatalf("a refused message broke the stream: %v", c.writeErr)
	}
}

// TestControlCancel: cancelling a blocked Read or Write returns the context's error, and
// the stream, whose framing is then unknown, stays failed.
func TestControlCancel(t *testing.T) {
	c, far := pipe(t)
	ctx, cancel := context.WithCancel(t.Context())
	readErr := make(chan error, 1)
	go func() {
		_, err := c.Read(ctx)
		readErr <- err
	}()
	// Half a length; net.Pipe's Write returns once the Read has taken it, so the Read is
	// then blocked for the rest.
	if _, err := far.Write([]byte{0, 0}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-readErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Read: %v", err)
	}
	if _, err := c.Read(t.Context()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after a cancelled one: %v", err)
	}

	// far reads two bytes of the frame and no more: the Write is blocked for the rest.
	wctx, wcancel := context.WithCancel(t.Context())
	writeErr := make(chan error, 1)
	go func() { writeErr <- c.Write(wctx, Message{Type: TypeHeartbeat}) }()
	if _, err := io.ReadFull(far, make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	wcancel()
	if err := <-writeErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Write: %v", err)
	}
	if err := c.Write(t.Context(), Message{Type: TypeHeartbeat}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write after a cancelled one: %v", err)
	}

	// A context already done sends nothing and breaks nothing.
	c2, _ := pipe(t)
	if err := c2.Write(ctx, Message{Type: TypeHeartbeat}); !errors.Is(err, context.Canceled) || c2.writeErr != nil {
		t.Fatalf("Write with a done context: %v", err)
	}
}
