package edge_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestCompression: a large compressible answer reaches a visitor compressed with the
// encoding it accepts (zstd preferred at equal q) and decodes to the app's bytes; small,
// already encoded, ranged and event-stream answers, and visitors accepting neither, get the
// app's bytes untouched.
func TestCompression(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("Warren compresses the answers worth compressing. ", 2000)
	var encoded bytes.Buffer
	gz := gzip.NewWriter(&encoded)
	gz.Write([]byte(big))
	gz.Close()
	backend := e.handlerApp(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, big)
		case "/small":
			io.WriteString(w, "tiny")
		case "/encoded":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(encoded.Bytes())
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, big)
		case "/file":
			http.ServeContent(w, r, "file.txt", time.Unix(0, 0), strings.NewReader(big))
		}
	}))
	e.httpsEdge("gz.example.test", backend, map[string]any{"compression": map[string]any{}})
	c := e.client()
	get := func(path string, hdr ...string) (int, string, http.Header) {
		return e.get(c, "https://gz.example.test"+path, hdr...)
	}

	for accept, want := range map[string]string{"gzip": "gzip", "zstd": "zstd", "gzip, zstd": "zstd", "gzip;q=1, zstd;q=0.5": "gzip", "br, deflate, gzip": "gzip"} {
		status, body, h := get("/big", "Accept-Encoding", accept)
		if status != 200 || h.Get("Content-Encoding") != want || !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
			t.Fatalf("Accept-Encoding %q: %d, Content-Encoding %q, Vary %q", accept, status, h.Get("Content-Encoding"), h.Get("Vary"))
		}
		if len(body) >= len(big)/4 {
			t.Fatalf("Accept-Encoding %q: %d bytes for %d", accept, len(body), len(big))
		}
		if got := decode(t, want, body); got != big {
			t.Fatalf("Accept-Encoding %q: the answer decodes to %d other bytes", accept, len(got))
		}
	}
	untouched := []struct {
		what, path, want string
		hdr              []string
	}{
		{"nothing accepted", "/big", big, []string{"Accept-Encoding", "identity"}},
		{"small", "/small", "tiny", []string{"Accept-Encoding", "gzip, zstd"}},
		{"already encoded", "/encoded", encoded.String(), []string{"Accept-Encoding", "gzip, zstd"}},
		{"event stream", "/events", big, []string{"Accept-Encoding", "gzip, zstd"}},
		{"range", "/file", big[100:1100], []string{"Accept-Encoding", "gzip, zstd", "Range", "bytes=100-1099"}},
	}
	for _, u := range untouched {
		_, body, h := get(u.path, u.hdr...)
		wantEncoding := ""
		if u.path == "/encoded" {
			wantEncoding = "gzip"
		}
		if body != u.want || h.Get("Content-Encoding") != wantEncoding {
			t.Fatalf("%s: Content-Encoding %q, %d bytes (want %d, untouched)", u.what, h.Get("Content-Encoding"), len(body), len(u.want))
		}
	}
}

func decode(t *testing.T, encoding, body string) string {
	t.Helper()
	var r io.Reader
	switch encoding {
	case "gzip":
		gz, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	case "zstd":
		d, err := zstd.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		r = d
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", encoding, err)
	}
	return string(b)
}
