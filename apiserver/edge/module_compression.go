package edge

import (
	"mime"
	"net/http"

	"github.com/klauspost/compress/gzhttp"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// compression is a route's compression step, github.com/klauspost/compress/gzhttp around
// the writer of everything after it: an answer is compressed with zstd or gzip, whichever
// the request's Accept-Encoding accepts with the higher q-value (zstd when equal), when
//   - it is at least compressMinSize bytes (by its Content-Length, or buffered until then;
//     an answer streamed without a Content-Length is compressed from its first flush),
//   - it has no Content-Encoding of its own and no Content-Range, and the request was not
//     a HEAD, a Range request (a multipart range answer carries no Content-Range) or an
//     upgrade (a WebSocket handshake, which gzhttp's writer could not hijack),
//   - and its Content-Type is compressible: not an event stream, and not what
//     gzhttp.DefaultContentTypeFilter leaves alone (video, audio, JPEG, archives, already
//     compressed formats).
//
// A compressed answer loses its Content-Length and Accept-Ranges; every answer to a request
// that is not a Range request or an upgrade gets Vary: Accept-Encoding. An upstream can opt an answer out with a
// No-Gzip-Compression header, which the edge removes. Brotli is not offered.
type compression struct{}

// compressMinSize is gzhttp's default: below one packet, compressing gains nothing.
const compressMinSize = gzhttp.DefaultMinSize

var compress = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(compressMinSize), gzhttp.ContentTypeFilter(compressible))
	if err != nil {
		panic(err) // the options are constants
	}
	return wrap
}()

// compressible is gzhttp's default filter, less event streams, which must reach the visitor
// event by event.
func compressible(contentType string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && mt == "text/event-stream" {
		return false
	}
	return gzhttp.DefaultContentTypeFilter(contentType)
}

// compressionModule compiles a compression module; nil when off.
func compressionModule(m *api.ToggleModule) *compression {
	if m == nil || !m.Enabled {
		return nil
	}
	return &compression{}
}

func (*compression) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	if r.Header.Get("Range") != "" || upgrading(r) {
		next(w, r, x)
		return
	}
	compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next(w, r, x) })).ServeHTTP(w, r)
}
