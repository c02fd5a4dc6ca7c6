package edge

import (
	"net/http"
	"strconv"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// httpResponseBackend answers every HTTP request itself; on a TCP or TLS edge it has
// nothing to answer with and the connection is closed.
type httpResponseBackend struct {
	status int
	header http.Header
	body   string
}

func compileHTTPResponse(b *api.HTTPResponseBackend) *httpResponseBackend {
	r := &httpResponseBackend{status: int(b.StatusCode), header: http.Header{}, body: b.Body}
	for k, v := range b.Headers {
		r.header.Set(k, v)
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r
}

func (b *httpResponseBackend) plan(*planner) []upstream { return []upstream{{response: b}} }

// write answers with the fixed response, after the response_headers module (edit).
func (b *httpResponseBackend) write(w http.ResponseWriter, edit *headerEdit) int64 {
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(b.body)))
	edit.apply(h)
	w.WriteHeader(b.status)
	n, _ := w.Write([]byte(b.body))
	return int64(n)
}
