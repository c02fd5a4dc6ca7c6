package netcopy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
)

// chunkedReader hands out data in reads of the sizes given, in turn: small reads keep the
// copy on its small buffer, reads that fill it move it to the large one and back.
type chunkedReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.sizes[r.i%len(r.sizes)], len(r.data))
	r.i++
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func TestCopyKeepsEveryByteInOrder(t *testing.T) {
	data := make([]byte, 10<<20+123)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(data)
	for _, sizes := range [][]int{{1}, {smallSize}, {largeSize}, {7, smallSize, largeSize, 100, largeSize / 3}, {1 << 20}} {
		var out bytes.Buffer
		n, err := Copy(&out, &chunkedReader{data: data, sizes: sizes})
		if err != nil || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("reads of %v: copied %d of %d, err %v, same %v", sizes, n, len(data), err, bytes.Equal(out.Bytes(), data))
		}
	}
}

type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	n := min(len(p), w.after)
	w.after -= n
	if n < len(p) {
		return n, nil // a short write without an error
	}
	return n, nil
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, net.ErrClosed }

func TestCopyErrors(t *testing.T) {
	if n, err := Copy(&failingWriter{after: 10}, &chunkedReader{data: make([]byte, 100), sizes: []int{100}}); !errors.Is(err, io.ErrShortWrite) || n != 10 {
		t.Errorf("short write: %d %v", n, err)
	}
	if _, err := Copy(io.Discard, failingReader{}); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read error: %v", err)
	}
}

// TestCloseWriteHalfCloses: after CloseWrite the peer reads EOF and can still answer.
func TestCloseWriteHalfCloses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		got, _ := io.ReadAll(c)
		_, _ = c.Write(append([]byte("heard "), got...))
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("ping"))
	if err := CloseWrite(c); err != nil {
		t.Fatal(err)
	}
	if answer, err := io.ReadAll(c); err != nil || string(answer) != "heard ping" {
		t.Fatalf("answer %q %v", answer, err)
	}
}
