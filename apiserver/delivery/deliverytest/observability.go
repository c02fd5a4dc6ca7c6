package deliverytest

import (
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// ObservabilityItem is one log item the observability fake accepted.
type ObservabilityItem struct {
	Message  string `json:"message"`
	DDSource string `json:"ddsource"`
	DDTags   string `json:"ddtags"`
	Service  string `json:"service"`
	Hostname string `json:"hostname"`
}

// Observability fakes the observability vendor's logs intake (POST /api/v2/logs): it takes
// only requests with its API key in DD-API-KEY and records each item's message, which must
// be the event's JSON.
type Observability struct {
	Recorder
	// URL is the intake's base URL, for delivery.Endpoints.Observability.
	URL string

	apiKey   string
	mu       sync.Mutex
	items    []ObservabilityItem
	requests int
}

// NewObservability starts the fake; it stops when the test ends.
func NewObservability(t testing.TB, apiKey string) *Observability {
	f := &Observability{apiKey: apiKey}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v2/logs", f.submit)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *Observability) submit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	f.mu.Unlock()
	if f.Refuse() {
		Unavailable(w)
		return
	}
	if r.Header.Get("DD-API-KEY") != f.apiKey {
		http.Error(w, `{"errors":[{"status":"403","title":"Forbidden","detail":"Forbidden"}]}`, http.StatusForbidden)
		return
	}
	var body io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			intakeBadRequest(w, err)
			return
		}
		body = zr
	case "deflate":
		zr, err := zlib.NewReader(r.Body)
		if err != nil {
			intakeBadRequest(w, err)
			return
		}
		body = zr
	default:
		http.Error(w, `{"errors":[{"status":"415","title":"Unsupported Media Type"}]}`, http.StatusUnsupportedMediaType)
		return
	}
	var items []ObservabilityItem
	if err := json.NewDecoder(body).Decode(&items); err != nil {
		intakeBadRequest(w, err)
		return
	}
	payloads := make([]json.RawMessage, len(items))
	for i, it := range items {
		if !json.Valid([]byte(it.Message)) {
			http.Error(w, `{"errors":[{"status":"400","title":"message is not the event's JSON"}]}`, http.StatusBadRequest)
			return
		}
		payloads[i] = json.RawMessage(it.Message)
	}
	f.mu.Lock()
	f.items = append(f.items, items...)
	f.mu.Unlock()
	f.Accept(payloads...)
	// The intake answers 202 with an empty object.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, "{}")
}

// Items returns the accepted items, in arrival order.
func (f *Observability) Items() []ObservabilityItem {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ObservabilityItem(nil), f.items...)
}

// Requests counts the intake requests received, refused ones included.
func (f *Observability) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func intakeBadRequest(w http.ResponseWriter, err error) {
	cloudLogsJSON(w, http.StatusBadRequest, map[string]any{"errors": []map[string]string{{"status": "400", "title": "Bad Request", "detail": err.Error()}}})
}
