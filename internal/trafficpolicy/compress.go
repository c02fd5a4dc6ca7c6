package trafficpolicy

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// compressResponse compresses the response's body with the first of algorithms (gzip,
// deflate, zstd; all three in that order by default) that the request's Accept-Encoding
// accepts; an answer that is already encoded, has no body (HEAD, 1xx, 204, 304) or whose
// request accepts none of them is left alone.
type compressResponse struct{ algorithms []string }

var compressors = map[string]func(io.Writer) (io.WriteCloser, error){
	"gzip":    func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, gzip.DefaultCompression) },
	"deflate": func(w io.Writer) (io.WriteCloser, error) { return zlib.NewWriterLevel(w, zlib.DefaultCompression) },
	"zstd": func(w io.Writer) (io.WriteCloser, error) {
		// RFC 8878 §3.1.1.1.2: HTTP's zstd allows windows of at most 8 MiB.
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(8<<20))
	},
}

var defaultAlgorithms = []string{"gzip", "deflate", "zstd"}

func parseCompressResponse(_ string, config []byte) (Action, error) {
	var c struct {
		Algorithms []string `json:"algorithms"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	if c.Algorithms == nil {
		return compressResponse{defaultAlgorithms}, nil
	}
	if len(c.Algorithms) == 0 {
		return nil, fmt.Errorf("algorithms needs at least one of %s", strings.Join(defaultAlgorithms, ", "))
	}
	for _, a := range c.Algorithms {
		if compressors[a] == nil {
			return nil, fmt.Errorf("algorithms: %q is not supported; supported: %s", a, strings.Join(defaultAlgorithms, ", "))
		}
	}
	return compressResponse{c.Algorithms}, nil
}

func (compressResponse) Type() string { return "compress-response" }
func (a compressResponse) run(x *Exchange) (*Stop, error) {
	res := x.Res
	switch {
	case res.Header.Get("Content-Encoding") != "", res.Body == nil, res.Body == http.NoBody,
		x.Req.Method == http.MethodHead, res.StatusCode < 200, res.StatusCode == http.StatusNoContent,
		res.StatusCode == http.StatusNotModified:
		return nil, nil
	}
	accepted := acceptedEncodings(x.Req.Header.Values("Accept-Encoding"))
	i := slices.IndexFunc(a.algorithms, func(alg string) bool { return accepted[alg] || accepted["*"] && !accepted["-"+alg] })
	if i < 0 {
		return nil, nil
	}
	alg := a.algorithms[i]
	res.Header.Add("Vary", "Accept-Encoding")
	res.Header.Set("Content-Encoding", alg)
	res.Header.Del("Content-Length")
	res.ContentLength = -1
	res.Body = compressed(res.Body, compressors[alg])
	x.changed()
	return nil, nil
}

// compressed reads body compressed by a writer of newWriter.
func compressed(body io.ReadCloser, newWriter func(io.Writer) (io.WriteCloser, error)) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer body.Close()
		cw, err := newWriter(pw)
		if err == nil {
			if _, err = io.Copy(cw, body); err == nil {
				err = cw.Close()
			}
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// acceptedEncodings are the codings of Accept-Encoding values with a q above 0; a coding
// refused with q=0 is marked "-coding".
func acceptedEncodings(values []string) map[string]bool {
	out := map[string]bool{}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(val, 64); err == nil {
						q = f
					}
				}
			}
			if name == "" {
				continue
			}
			if q > 0 {
				out[name] = true
			} else {
				out["-"+name] = true
			}
		}
	}
	return out
}
