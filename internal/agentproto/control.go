package agentproto

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// MaxMessage bounds one control message, as the v1 WebSocket read limit does.
const MaxMessage = 1 << 20

// ErrMalformed marks a control frame that is not one JSON object of valid UTF-8 within
// MaxMessage: the server answers it as v1 does a bad frame (Error ERR_213, then close).
var ErrMalformed = errors.New("malformed control message")

// ControlConn carries Messages on the control stream, one per frame: a uint32 big-endian
// length, then that many bytes of JSON. It is safe for one reader and concurrent writers.
// A Read or Write that fails mid-frame (deadline, cancellation, broken stream) leaves the
// framing unknown, so the ControlConn keeps that error for every later call of its kind.
type ControlConn struct {
	conn net.Conn

	readErr error // the reader's own: one reader at a time

	writeMu  sync.Mutex
	writeErr error
}

// NewControlConn frames Messages over conn (the control stream).
func NewControlConn(conn net.Conn) *ControlConn { return &ControlConn{conn: conn} }

// Read reads the next message. An ErrMalformed for a frame read whole leaves the stream
// usable; any other error is final.
func (c *ControlConn) Read(ctx context.Context) (Message, error) {
	var m Message
	if c.readErr != nil {
		return m, c.readErr
	}
	if err := ctx.Err(); err != nil {
		return m, err
	}
	var data []byte
	err := withDeadline(ctx, c.conn.SetReadDeadline, func() error {
		var length [4]byte
		if _, err := io.ReadFull(c.conn, length[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(length[:])
		if n > MaxMessage {
			return fmt.Errorf("%w: a frame of %d bytes exceeds %d", ErrMalformed, n, MaxMessage)
		}
		data = make([]byte, n)
		_, err := io.ReadFull(c.conn, data)
		return err
	})
	if err != nil {
		c.readErr = fmt.Errorf("agentproto: reading the control stream: %w", err)
		return m, c.readErr
	}
	// Strict: invalid UTF-8 (lone surrogates too) and duplicate members are refused, as on
	// the API; members this side does not know are ignored, so either side may add some.
	if err := jsonv2.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("agentproto: %w: %w", ErrMalformed, err)
	}
	return m, nil
}

// Write sends m in one frame; concurrent Writes never interleave.
func (c *ControlConn) Write(ctx context.Context, m Message) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(data) > MaxMessage {
		return fmt.Errorf("agentproto: a %s message of %d bytes exceeds %d", m.Type, len(data), MaxMessage)
	}
	frame := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data)))
	frame = append(frame, data...)

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := withDeadline(ctx, c.conn.SetWriteDeadline, func() error {
		_, err := c.conn.Write(frame)
		return err
	}); err != nil {
		c.writeErr = fmt.Errorf("agentproto: writing the control stream: %w", err)
		return c.writeErr
	}
	return nil
}

// Close closes the control stream.
func (c *ControlConn) Close() error { return c.conn.Close() }

// longAgo is a deadline already past: it interrupts a blocked Read or Write at once.
var longAgo = time.Unix(1, 0)

// withDeadline runs op under ctx: its deadline becomes the connection's, and cancelling it
// interrupts op. The deadline is cleared afterwards, once a cancellation racing with the
// end of op has finished setting it.
func withDeadline(ctx context.Context, set func(time.Time) error, op func() error) error {
	deadline, _ := ctx.Deadline() // zero: none
	_ = set(deadline)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = set(longAgo)
		close(fired)
	})
	err := op()
	if !stop() {
		<-fired
	}
	_ = set(time.Time{})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}
