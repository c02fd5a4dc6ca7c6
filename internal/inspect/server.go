package inspect

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// csp allows the page's own script and style only: no inline code, no other origin.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// replayTimeout bounds one replay, dial and answer included.
const replayTimeout = 30 * time.Second

// Handler serves the page, GET /api/exchanges (JSON, newest first), GET /api/events (the
// changes as server-sent events) and POST /api/exchanges/{id}/replay.
func (in *Inspector) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /api/exchanges", in.list)
	mux.HandleFunc("GET /api/events", in.events)
	mux.HandleFunc("POST /api/exchanges/{id}/replay", in.replay)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !in.o.AllowRemote && !loopbackHost(r.Host) {
			http.Error(w, "the inspector answers on a loopback name only (127.0.0.1, [::1] or localhost)", http.StatusMisdirectedRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// loopbackHost: hostport names 127.0.0.0/8, ::1 or localhost.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (in *Inspector) list(w http.ResponseWriter, _ *http.Request) {
	ex, _, _ := in.since(0)
	writeJSON(w, http.StatusOK, map[string]any{"exchanges": nonNil(ex)})
}

// events sends every exchange as it is recorded or answered, as one "data:" JSON line.
func (in *Inspector) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var v uint64
	for {
		ex, next, changed := in.since(v)
		v = next
		for i := len(ex) - 1; i >= 0; i-- { // oldest first, so the page prepends in order
			b, _ := json.Marshal(ex[i])
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		}
	}
}

// replayRequest is an edited request; a zero member keeps the original's. A header whose
// value is Masked keeps the original's value.
type replayRequest struct {
	Method  string   `json:"method"`
	Path    string   `json:"path"`
	Headers []Header `json:"headers"`
	Body    *string  `json:"body"`
}

func (in *Inspector) replay(w http.ResponseWriter, r *http.Request) {
	// A page of another origin could post here: only a JSON body (which a form cannot
	// send without a preflight this server never answers) from no or the same origin.
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "send the replay as application/json")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		writeError(w, http.StatusForbidden, "a replay from another origin is refused")
		return
	}
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	orig, ok := in.find(id)
	if err != nil || !ok {
		writeError(w, http.StatusNotFound, "no such exchange (it may have left the ring)")
		return
	}
	var edit replayRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, int64(in.o.BodyLimit)*2+64<<10)).Decode(&edit); err != nil {
		writeError(w, http.StatusBadRequest, "the replay is not valid JSON: "+err.Error())
		return
	}
	req, err := buildReplay(orig, edit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	e, err := in.send(r.Context(), orig, req)
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, in.present(e))
}

// buildReplay is orig's request with edit applied.
func buildReplay(orig Exchange, edit replayRequest) (*http.Request, error) {
	method, path, body := orig.Method, orig.Path, orig.ReqBody
	if edit.Method != "" {
		method = edit.Method
	}
	if edit.Path != "" {
		path = edit.Path
	}
	if edit.Body != nil {
		body = []byte(*edit.Body)
	}
	hdrs := orig.ReqHeader
	if edit.Headers != nil {
		hdrs = make([]Header, len(edit.Headers))
		for i, h := range edit.Headers {
			hdrs[i] = h
			if h.Value == Masked {
				hdrs[i].Value = originalValue(orig.ReqHeader, h.Name)
			}
		}
	}
	if orig.ReqCut && edit.Body == nil {
		return nil, errors.New("the request body was cut at the inspector's limit: edit the body to replay it")
	}
	req, err := http.NewRequest(method, "http://replay"+path, bytes.NewReader(body))
	if err != nil || !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("cannot replay %s %q: give a method and a path starting with /", method, path)
	}
	req.RequestURI = ""
	req.Host = orig.Host
	for _, h := range hdrs {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			req.Host = h.Value
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Transfer-Encoding"):
			// the body's own length is sent
		default:
			req.Header.Add(h.Name, h.Value)
		}
	}
	req.ContentLength = int64(len(body))
	return req, nil
}

// originalValue is the first value of the header name in h.
func originalValue(h []Header, name string) string {
	for _, f := range h {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// send replays req to orig's app over a connection of its own and records the exchange.
func (in *Inspector) send(ctx context.Context, orig Exchange, req *http.Request) (*Exchange, error) {
	if in.o.Dial == nil {
		return nil, errors.New("this inspector cannot reach the app")
	}
	ctx, cancel := context.WithTimeout(ctx, replayTimeout)
	defer cancel()
	conn, err := in.o.Dial(ctx, orig.proto, orig.forwardsTo)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the app: %w", err)
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	req.Close = true
	e := &Exchange{Time: time.Now(), TunnelID: orig.TunnelID, Replay: true, Method: req.Method, Host: req.Host, Path: req.URL.RequestURI(),
		ReqHeader: headers(req.Header, req.Host), proto: orig.proto, forwardsTo: orig.forwardsTo}
	body, _ := req.GetBody()
	e.ReqBody, e.ReqCut, _ = in.readBody(body)
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("sending the request to the app: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil, fmt.Errorf("reading the app's answer: %w", err)
	}
	e.Status, e.RespHeader = resp.StatusCode, headers(resp.Header, "")
	e.RespBody, e.RespCut, err = in.readBody(resp.Body)
	if err != nil {
		e.Error = "response body: " + err.Error()
	}
	e.DurationMS = float64(time.Since(e.Time).Microseconds()) / 1000
	in.add(e)
	return e, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func nonNil(ex []Exchange) []Exchange {
	if ex == nil {
		return []Exchange{}
	}
	return ex
}
