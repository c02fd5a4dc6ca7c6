package inspect

import (
	"errors"
	"sync"
	"time"
)

// errOverflow ends a parse whose tap fell too far behind the stream.
var errOverflow = errors.New("inspect: the tap fell behind; the rest of the stream is not inspected")

// tapBuffer is one direction of a stream as the parser sees it. Write never blocks and
// never fails, so the forwarded bytes never wait on the inspector: when the parser lags
// by more than max bytes, or has given up, the tap drops what follows.
// stamp: the bytes of buf up to end were forwarded at the time at.
type stamp struct {
	end int
	at  time.Time
}

type tapBuffer struct {
	mu        sync.Mutex
	ready     *sync.Cond
	buf       []byte
	at        []stamp // when the bytes of buf were forwarded: one per Write
	lastAt    time.Time
	max       int
	closed    bool // the stream ended
	abandoned bool // overflowed, or the parser gave up
}

func newTapBuffer(max int) *tapBuffer {
	b := &tapBuffer{max: max}
	b.ready = sync.NewCond(&b.mu)
	return b
}

func (b *tapBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.abandoned || b.closed:
	case len(b.buf)+len(p) > b.max:
		b.abandoned, b.buf, b.at = true, nil, nil
		b.ready.Broadcast()
	default:
		b.buf = append(b.buf, p...)
		b.at = append(b.at, stamp{len(b.buf), time.Now()})
		b.ready.Broadcast()
	}
	return len(p), nil
}

func (b *tapBuffer) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == 0 && !b.closed && !b.abandoned {
		b.ready.Wait()
	}
	if b.abandoned {
		return 0, errOverflow
	}
	if len(b.buf) == 0 {
		return 0, errEOF
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	// The time of the last byte read: the parser's clock, so that a parse that lags the
	// stream still measures when the bytes went by.
	start := 0 // where b.at[0]'s bytes begin
	for len(b.at) > 0 && start < n {
		b.lastAt = b.at[0].at
		if b.at[0].end > n {
			break // read in part
		}
		start = b.at[0].end
		b.at = b.at[1:]
	}
	for i := range b.at {
		b.at[i].end -= n
	}
	if len(b.buf) == 0 {
		b.buf, b.at = nil, nil // lets the backing arrays go
	}
	return n, nil
}

// close ends the stream: the parser reads what is left, then EOF.
func (b *tapBuffer) close() {
	b.mu.Lock()
	b.closed = true
	b.ready.Broadcast()
	b.mu.Unlock()
}

// abandon drops everything from now on (the parser stopped reading).
func (b *tapBuffer) abandon() {
	b.mu.Lock()
	b.abandoned, b.buf, b.at = true, nil, nil
	b.ready.Broadcast()
	b.mu.Unlock()
}

// readAt is when the last byte read was forwarded.
func (b *tapBuffer) readAt() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastAt
}
