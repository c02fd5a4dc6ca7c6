// Package netcopy copies between the two sides of a proxied connection: the edge's visitor
// connection and its stream to an agent, the agent's stream and its app.
//
// Most of such connections are idle most of the time (kept-alive visitors, tunneled
// sessions waiting for their next request), and a copy blocked in Read holds its buffer:
// with a 32 KiB buffer per direction and per side, an idle tunneled connection held 128 KiB
// of buffers alone. Copy waits with a small buffer and takes a large pooled one only while
// data keeps coming.
package netcopy

import (
	"crypto/tls"
	"io"
	"net"
	"sync"
)

const (
	// smallSize is the buffer a copy holds while it waits for data.
	smallSize = 2 << 10
	// largeSize is the buffer it borrows while a burst lasts: a read that fills the small
	// buffer announces more data, and a read that fills less than half the large one ends
	// the burst.
	largeSize = 32 << 10
)

var large = sync.Pool{New: func() any { b := make([]byte, largeSize); return &b }}

// Copy copies src to dst until src ends (nil error, as io.Copy) or either fails. It never
// uses src's WriterTo or dst's ReaderFrom, which would copy with a buffer of their own.
func Copy(dst io.Writer, src io.Reader) (written int64, err error) {
	small := make([]byte, smallSize)
	var big *[]byte
	defer func() {
		if big != nil {
			large.Put(big)
		}
	}()
	for {
		buf := small
		if big != nil {
			buf = *big
		}
		n, rerr := src.Read(buf)
		if n > 0 {
			w, werr := dst.Write(buf[:n])
			written += int64(w)
			if werr == nil && w != n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return written, werr
			}
		}
		switch {
		case big == nil && n == len(small):
			big = large.Get().(*[]byte)
		case big != nil && n < largeSize/2:
			large.Put(big)
			big = nil
		}
		if rerr != nil {
			if rerr == io.EOF {
				return written, nil
			}
			return written, rerr
		}
	}
}

// CloseWrite ends c's writing and keeps its reading, so that the other side sees the end of
// this direction: close_notify then the TCP FIN for TLS, a FIN for TCP and for yamux
// streams (whose Close is a half-close); a full Close for anything else.
func CloseWrite(c net.Conn) error {
	switch c := c.(type) {
	case *tls.Conn:
		if err := c.CloseWrite(); err != nil {
			return err
		}
		return CloseWrite(c.NetConn())
	case interface{ CloseWrite() error }:
		return c.CloseWrite()
	}
	return c.Close()
}
