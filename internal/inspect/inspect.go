// Package inspect is the agent's traffic inspector: it reads the HTTP/1.1 exchanges of
// the agent's http and https tunnels from copies of the forwarded bytes (never changing or
// delaying them), keeps the last ones in a bounded ring, and serves a local page that
// lists them live and replays a request to the local app.
package inspect

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultExchanges = 200
	DefaultBodyLimit = 64 << 10
	// tapLag bounds what one direction of a stream may hold while its parser catches up.
	tapLag = 1 << 20
)

var errEOF = io.EOF

// Masked replaces the values of the headers that carry credentials.
const Masked = "••••••"

// maskedHeaders carry credentials: their values are masked on the page by default.
var maskedHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// DialFunc connects to the local app a tunnel forwards to (TLS included for an https://
// app), as the agent's forwarder does; replays go through it.
type DialFunc func(ctx context.Context, proto, forwardsTo string) (net.Conn, error)

// Options configure an Inspector.
type Options struct {
	Exchanges   int  // exchanges kept, newest first (default DefaultExchanges)
	BodyLimit   int  // bytes of each body kept (default DefaultBodyLimit)
	ShowSecrets bool // show Authorization and cookies as they are
	// AllowRemote accepts page requests whose Host is not a loopback name; without it a
	// page reached through another name (DNS rebinding) is refused.
	AllowRemote bool
	Dial        DialFunc
}

// Header is one header line, in order.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Exchange is one request through a tunnel and the app's answer.
type Exchange struct {
	ID         uint64    `json:"id"`
	Time       time.Time `json:"time"`
	TunnelID   string    `json:"tunnel_id"`
	Replay     bool      `json:"replay"`
	Method     string    `json:"method"`
	Host       string    `json:"host"`
	Path       string    `json:"path"`
	ReqHeader  []Header  `json:"request_headers"`
	ReqBody    []byte    `json:"request_body"`
	ReqCut     bool      `json:"request_body_truncated"`
	Status     int       `json:"status"` // 0 while the answer is pending (or never came)
	RespHeader []Header  `json:"response_headers"`
	RespBody   []byte    `json:"response_body"`
	RespCut    bool      `json:"response_body_truncated"`
	DurationMS float64   `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`

	proto, forwardsTo string
	version           uint64 // the Inspector's version when last changed
}

// Inspector records exchanges and serves the page.
type Inspector struct {
	o Options

	mu      sync.Mutex
	ring    []*Exchange // oldest first; at most o.Exchanges
	nextID  uint64
	version uint64
	changed chan struct{} // closed and replaced at every change
}

// New returns an Inspector.
func New(o Options) *Inspector {
	if o.Exchanges <= 0 {
		o.Exchanges = DefaultExchanges
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = DefaultBodyLimit
	}
	return &Inspector{o: o, changed: make(chan struct{})}
}

// SetDial sets how replays reach the apps (the agent's forwarder sets it); call it before
// serving Handler.
func (in *Inspector) SetDial(d DialFunc) { in.o.Dial = d }

// add records e as a new exchange, dropping the oldest beyond the bound.
func (in *Inspector) add(e *Exchange) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.nextID++
	e.ID = in.nextID
	if len(in.ring) == in.o.Exchanges {
		in.ring[0] = nil
		in.ring = in.ring[1:]
	}
	in.ring = append(in.ring, e)
	in.touch(e)
}

// update applies f to e under the lock.
func (in *Inspector) update(e *Exchange, f func(*Exchange)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f(e)
	in.touch(e)
}

func (in *Inspector) touch(e *Exchange) {
	in.version++
	e.version = in.version
	close(in.changed)
	in.changed = make(chan struct{})
}

// since returns copies of the exchanges changed after version v, newest first, the
// current version and a channel closed at the next change.
func (in *Inspector) since(v uint64) ([]Exchange, uint64, <-chan struct{}) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []Exchange
	for i := len(in.ring) - 1; i >= 0; i-- {
		if in.ring[i].version > v {
			out = append(out, in.present(in.ring[i]))
		}
	}
	return out, in.version, in.changed
}

// find returns the exchange id (a copy, unmasked), if still kept.
func (in *Inspector) find(id uint64) (Exchange, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, e := range in.ring {
		if e.ID == id {
			return *e, true
		}
	}
	return Exchange{}, false
}

// present is e as the page shows it: credentials masked unless ShowSecrets.
func (in *Inspector) present(e *Exchange) Exchange {
	c := *e
	if !in.o.ShowSecrets {
		c.ReqHeader, c.RespHeader = mask(c.ReqHeader), mask(c.RespHeader)
	}
	return c
}

// mask returns h with the values of maskedHeaders replaced by Masked.
func mask(h []Header) []Header {
	out := make([]Header, len(h))
	for i, f := range h {
		out[i] = f
		for _, m := range maskedHeaders {
			if strings.EqualFold(f.Name, m) {
				out[i].Value = Masked
			}
		}
	}
	return out
}

// Stream is the inspector's view of one forwarded stream: the forwarder writes each
// direction's bytes, as forwarded, to Request and Response, and calls Close at the end.
type Stream struct {
	Request, Response io.Writer
	req, resp         *tapBuffer
	done              chan struct{}
}

// Close ends the stream's parse and waits for it.
func (s *Stream) Close() {
	s.req.close()
	s.resp.close()
	<-s.done
}

// Tap starts inspecting a stream of tunnelID (proto http or https) forwarded to forwardsTo.
func (in *Inspector) Tap(tunnelID, proto, forwardsTo string) *Stream {
	s := &Stream{req: newTapBuffer(tapLag), resp: newTapBuffer(tapLag), done: make(chan struct{})}
	s.Request, s.Response = s.req, s.resp
	pending := make(chan *Exchange, 64) // requests awaiting their answer, in order
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(pending)
		defer s.req.abandon()
		in.readRequests(s.req, tunnelID, proto, forwardsTo, pending)
	}()
	go func() {
		defer wg.Done()
		defer s.resp.abandon()
		in.readResponses(s.resp, pending)
		for e := range pending { // requests the stream never answered
			in.update(e, func(e *Exchange) { e.Error = "no answer" })
		}
	}()
	go func() { wg.Wait(); close(s.done) }()
	return s
}

func (in *Inspector) readRequests(tap *tapBuffer, tunnelID, proto, forwardsTo string, pending chan<- *Exchange) {
	r := bufio.NewReader(tap)
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		e := &Exchange{Time: tap.readAt(), TunnelID: tunnelID, Method: req.Method, Host: req.Host, Path: req.RequestURI,
			ReqHeader: headers(req.Header, req.Host), proto: proto, forwardsTo: forwardsTo}
		body, cut, err := in.readBody(req.Body)
		e.ReqBody, e.ReqCut = body, cut
		in.add(e)
		if err != nil {
			in.update(e, func(e *Exchange) { e.Error = "request body: " + err.Error() })
			return
		}
		select {
		case pending <- e:
		default: // more requests in flight than kept waiting: stop pairing
			return
		}
		if req.Method == http.MethodConnect || req.Header.Get("Upgrade") != "" {
			return // what follows is not HTTP/1.1 any more
		}
	}
}

func (in *Inspector) readResponses(tap *tapBuffer, pending <-chan *Exchange) {
	r := bufio.NewReader(tap)
	for e := range pending {
		req := &http.Request{Method: e.Method}
		var resp *http.Response
		var err error
		for {
			if resp, err = http.ReadResponse(r, req); err != nil || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
				break
			}
			// 1xx informational answers precede the real one.
		}
		if err != nil {
			in.update(e, func(e *Exchange) { e.Error = "response: " + err.Error() })
			return
		}
		body, cut, berr := in.readBody(resp.Body)
		in.update(e, func(e *Exchange) {
			e.Status = resp.StatusCode
			e.RespHeader = headers(resp.Header, "")
			e.RespBody, e.RespCut = body, cut
			e.DurationMS = float64(tap.readAt().Sub(e.Time).Microseconds()) / 1000
			if berr != nil {
				e.Error = "response body: " + berr.Error()
			}
		})
		if berr != nil || resp.StatusCode == http.StatusSwitchingProtocols {
			return
		}
	}
}

// readBody keeps the first BodyLimit bytes of body and reads (dropping) the rest.
func (in *Inspector) readBody(body io.ReadCloser) ([]byte, bool, error) {
	defer body.Close()
	kept, err := io.ReadAll(io.LimitReader(body, int64(in.o.BodyLimit)))
	if err != nil {
		return kept, false, err
	}
	n, err := io.Copy(io.Discard, body)
	return kept, n > 0, err
}

// headers lists h in a stable order, Host first when given (net/http keeps it apart).
func headers(h http.Header, host string) []Header {
	var out []Header
	if host != "" {
		out = append(out, Header{"Host", host})
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, Header{k, v})
		}
	}
	return out
}
