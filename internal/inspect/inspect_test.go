package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// feed writes the request and response bytes of one stream through a tap, as the
// forwarder does, and ends the stream.
func feed(in *Inspector, request, response string) {
	s := in.Tap("tn_1", "http", "localhost:1")
	_, _ = io.WriteString(s.Request, request)
	_, _ = io.WriteString(s.Response, response)
	s.Close()
}

func exchanges(in *Inspector) []Exchange {
	ex, _, _ := in.since(0)
	return ex
}

func TestTapRecordsEachExchangeOfAStream(t *testing.T) {
	in := New(Options{})
	feed(in,
		"POST /a?x=1 HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 5\r\n\r\nhello"+
			"HEAD /b HTTP/1.1\r\nHost: app.example.com\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"+
			"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n") // a HEAD answer has no body
	ex := exchanges(in)
	if len(ex) != 2 {
		t.Fatalf("got %d exchanges, want 2: %+v", len(ex), ex)
	}
	head, post := ex[0], ex[1] // newest first
	if post.Method != "POST" || post.Path != "/a?x=1" || post.Host != "app.example.com" || string(post.ReqBody) != "hello" ||
		post.Status != 201 || string(post.RespBody) != "ok" || post.TunnelID != "tn_1" || post.Error != "" {
		t.Errorf("POST exchange = %+v", post)
	}
	if head.Method != "HEAD" || head.Status != 200 || len(head.RespBody) != 0 || head.Error != "" {
		t.Errorf("HEAD exchange = %+v", head)
	}
}

func TestTapMarksARequestNeverAnswered(t *testing.T) {
	in := New(Options{})
	feed(in, "GET / HTTP/1.1\r\nHost: h\r\n\r\n", "")
	ex := exchanges(in)
	if len(ex) != 1 || ex[0].Status != 0 || ex[0].Error == "" {
		t.Fatalf("exchanges = %+v, want one without status and with an error", ex)
	}
}

func TestTapIgnoresWhatIsNotHTTP(t *testing.T) {
	in := New(Options{})
	feed(in, "\x16\x03\x01 not http at all\r\n\r\n", "garbage")
	if ex := exchanges(in); len(ex) != 0 {
		t.Fatalf("exchanges = %+v, want none", ex)
	}
}

func TestBodiesAreCutAtTheLimit(t *testing.T) {
	in := New(Options{BodyLimit: 4})
	feed(in, "PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz")
	ex := exchanges(in)
	if len(ex) != 1 || string(ex[0].ReqBody) != "abcd" || !ex[0].ReqCut || string(ex[0].RespBody) != "xyz" || ex[0].RespCut {
		t.Fatalf("exchanges = %+v, want the request body cut to abcd, the answer whole", ex)
	}
}

func TestTheRingKeepsTheLastExchanges(t *testing.T) {
	in := New(Options{Exchanges: 3})
	for _, p := range []string{"/1", "/2", "/3", "/4", "/5"} {
		feed(in, "GET "+p+" HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n")
	}
	var paths []string
	for _, e := range exchanges(in) {
		paths = append(paths, e.Path)
	}
	if got := strings.Join(paths, " "); got != "/5 /4 /3" {
		t.Fatalf("paths = %s, want /5 /4 /3", got)
	}
}

func TestATapThatFallsBehindDropsRatherThanBlocks(t *testing.T) {
	b := newTapBuffer(8)
	for range 3 { // nobody reads: the writes must return at once, all of p taken
		if n, err := b.Write([]byte("0123456")); n != 7 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if _, err := b.Read(make([]byte, 8)); err != errOverflow {
		t.Fatalf("Read after overflow = %v, want errOverflow", err)
	}
}

func TestCredentialsAreMaskedUnlessShown(t *testing.T) {
	const req = "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer s3cret\r\nCookie: sid=s3cret\r\nAccept: */*\r\n\r\n"
	const resp = "HTTP/1.1 200 OK\r\nSet-Cookie: sid=s3cret\r\nContent-Length: 0\r\n\r\n"
	masked := New(Options{})
	feed(masked, req, resp)
	b, _ := json.Marshal(exchanges(masked))
	if bytes.Contains(b, []byte("s3cret")) || bytes.Count(b, []byte(Masked)) != 3 || !bytes.Contains(b, []byte(`"*/*"`)) {
		t.Errorf("masked exchange = %s, want Authorization, Cookie and Set-Cookie masked, Accept kept", b)
	}
	shown := New(Options{ShowSecrets: true})
	feed(shown, req, resp)
	if b, _ := json.Marshal(exchanges(shown)); bytes.Count(b, []byte("s3cret")) != 3 {
		t.Errorf("shown exchange = %s, want the credentials as they are", b)
	}
}

// replayFixture is an app that echoes what it got, an inspector whose replays reach it,
// and one recorded exchange for it.
func replayFixture(t *testing.T) (*Inspector, *httptest.Server, chan *http.Request) {
	got := make(chan *http.Request, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		got <- r
		w.Header().Set("Set-Cookie", "sid=fresh")
		_, _ = w.Write(append([]byte("echo:"), body...))
	}))
	t.Cleanup(app.Close)
	in := New(Options{Dial: func(ctx context.Context, proto, forwardsTo string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", forwardsTo)
	}})
	s := in.Tap("tn_1", "http", app.Listener.Addr().String())
	_, _ = io.WriteString(s.Request, "POST /orig HTTP/1.1\r\nHost: app.example.com\r\nAuthorization: Bearer s3cret\r\nContent-Length: 3\r\n\r\nabc")
	_, _ = io.WriteString(s.Response, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	s.Close()
	page := httptest.NewServer(in.Handler())
	t.Cleanup(page.Close)
	return in, page, got
}

func postReplay(t *testing.T, page *httptest.Server, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(page.URL+"/api/exchanges/1/replay", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func TestReplayAsIsSendsTheOriginalRequest(t *testing.T) {
	in, page, got := replayFixture(t)
	resp, out := postReplay(t, page, `{}`)
	if resp.StatusCode != 200 || out["status"] != float64(200) || out["replay"] != true {
		t.Fatalf("replay answered %d %v", resp.StatusCode, out)
	}
	r := <-got
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.URL.Path != "/orig" || r.Host != "app.example.com" || r.Header.Get("Authorization") != "Bearer s3cret" || string(body) != "abc" {
		t.Errorf("the app got %s %s host %s auth %q body %q", r.Method, r.URL, r.Host, r.Header.Get("Authorization"), body)
	}
	if ex := exchanges(in); len(ex) != 2 || !ex[0].Replay || string(ex[0].RespBody) != "echo:abc" {
		t.Errorf("exchanges = %+v, want the replay recorded first", ex)
	}
}

func TestReplayEditedKeepsAMaskedValue(t *testing.T) {
	_, page, got := replayFixture(t)
	resp, out := postReplay(t, page, `{"method":"PUT","path":"/edited?q=1","headers":[{"name":"Authorization","value":"`+Masked+`"},{"name":"X-New","value":"1"}],"body":"xyz"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("replay answered %d %v", resp.StatusCode, out)
	}
	r := <-got
	body, _ := io.ReadAll(r.Body)
	if r.Method != "PUT" || r.URL.String() != "/edited?q=1" || r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-New") != "1" || string(body) != "xyz" {
		t.Errorf("the app got %s %s auth %q x-new %q body %q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-New"), body)
	}
	if b, _ := json.Marshal(out); bytes.Contains(b, []byte("fresh")) {
		t.Errorf("the replay's answer shows its Set-Cookie: %s", b)
	}
}

func TestReplayRefusals(t *testing.T) {
	_, page, _ := replayFixture(t)
	for _, c := range []struct {
		name, path, ctype, origin, body string
		want                            int
	}{
		{"a form", "/api/exchanges/1/replay", "application/x-www-form-urlencoded", "", "a=1", http.StatusUnsupportedMediaType},
		{"another origin", "/api/exchanges/1/replay", "application/json", "https://evil.example", "{}", http.StatusForbidden},
		{"unknown exchange", "/api/exchanges/99/replay", "application/json", "", "{}", http.StatusNotFound},
		{"bad path", "/api/exchanges/1/replay", "application/json", "", `{"path":"no-slash"}`, http.StatusBadRequest},
	} {
		req, _ := http.NewRequest("POST", page.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.ctype)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

func TestThePageIsServedWithAStrictPolicyOnLoopbackNamesOnly(t *testing.T) {
	in := New(Options{})
	rec := httptest.NewRecorder()
	in.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:4040/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Traffic inspector") || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("GET / = %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
	rec = httptest.NewRecorder()
	in.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://rebound.example.com:4040/api/exchanges", nil))
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("GET through another name = %d, want 421", rec.Code)
	}
	rec = httptest.NewRecorder()
	New(Options{AllowRemote: true}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://inspector.example.com/api/exchanges", nil))
	if rec.Code != 200 {
		t.Errorf("GET through another name with AllowRemote = %d, want 200", rec.Code)
	}
}

func TestATapTellsWhenTheBytesReadWentBy(t *testing.T) {
	b := newTapBuffer(64)
	_, _ = b.Write([]byte("ab"))
	_, _ = b.Write([]byte("cd"))
	first, second := b.at[0].at, b.at[1].at
	for _, step := range []struct {
		n    int
		want time.Time
	}{{1, first}, {1, first}, {1, second}, {1, second}} {
		if n, err := b.Read(make([]byte, step.n)); n != step.n || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
		if got := b.readAt(); !got.Equal(step.want) {
			t.Fatalf("readAt = %v, want %v", got, step.want)
		}
	}
}
