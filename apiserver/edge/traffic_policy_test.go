package edge_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// policyRoute creates an HTTPS edge on host whose route goes to a new app (named host)
// through a real agent, with policy as its traffic_policy.
func (e *env) policyRoute(host, policy string) (edgeID, routeID string) {
	e.t.Helper()
	e.tunnel(host, map[string]string{"app": host})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": host}})
	return e.httpsEdge(host, group, map[string]any{"traffic_policy": map[string]any{"value": policy}})
}

// do sends req through the edge and returns status, body (not decoded) and headers.
func (e *env) do(req *http.Request) (int, string, http.Header) {
	e.t.Helper()
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

const httpPolicy = `
on_http_request:
  - name: tag every request
    actions:
      - type: add-headers
        config: {headers: {x-added: "yes", x-order: first}}
      - type: remove-headers
        config: {headers: [x-gone]}
      - type: log
        config: {metadata: {team: web}}
  - name: sees the rule before
    expressions: ["req.url.path == '/order'", "getReqHeader('x-order') == ['first']"]
    actions:
      - type: custom-response
        config: {status_code: 200, body: "saw first"}
  - expressions: ["req.url.path == '/deny' && req.method == 'GET'"]
    actions: [{type: deny, config: {status_code: 401}}, {type: custom-response, config: {status_code: 200, body: never}}]
  - expressions: ["req.url.path == '/custom'"]
    actions: [{type: custom-response, config: {status_code: 418, body: teapot, headers: {x-t: t}}}]
  - expressions: ["req.url.path.startsWith('/private')"]
    actions: [{type: restrict-ips, config: {allow: [192.0.2.0/24]}}]
  - expressions: ["req.url.path == '/close'"]
    actions: [{type: close-connection}]
  - expressions: ["req.url.path == '/broken'", "req.headers['x-missing'][0] == 'a'"]
    actions: [{type: deny}]
  - expressions: ["req.url.path.startsWith('/old/')"]
    actions: [{type: redirect, config: {from: "/old/([a-z]+)", to: "/new/$1", status_code: 301, headers: {x-r: r}}}]
  - actions: [{type: url-rewrite, config: {from: "/v1/(.*)", to: "/v2/$1"}}]
  - name: variables of every family
    expressions:
      - "conn.client_ip == '127.0.0.1' && inCidrRange(conn.client_ip, '127.0.0.0/8') && conn.client_port > 0"
      - "conn.tls.version == 'TLS 1.3' && conn.tls.sni == req.host && endpoint.port == 443 && time.now > conn.ts.start - duration('1h')"
      - "req.url.path == '/vars' && getQueryParam('q') == ['1'] && req.url.query == 'q=1' && hasReqHeader('X-Probe')"
    actions: [{type: custom-response, config: {status_code: 200, body: "all variables"}}]
on_http_response:
  - actions:
      - type: add-headers
        config: {headers: {x-res: added}}
      - type: remove-headers
        config: {headers: [server-secret]}
  - expressions: ["res.status_code == 200 && req.url.path == '/replace' && getResHeader('app') == ['policy.example.test']"]
    actions: [{type: custom-response, config: {status_code: 203, body: replaced}}]
  - expressions: ["req.url.path == '/refuse' && res.headers['x-res'] == ['added']"]
    actions: [{type: deny, config: {status_code: 502}}]
  - expressions: ["req.url.path.startsWith('/zip')"]
    actions: [{type: compress-response, config: {algorithms: [zstd, gzip]}}]
`

// TestTrafficPolicyHTTP: every HTTP action on real traffic through a real agent, rules in
// order (a rule sees what the one before changed; a terminating action ends the phase), an
// expression over each variable family, and an expression error refusing the request.
func TestTrafficPolicyHTTP(t *testing.T) {
	e := newEnv(t)
	e.policyRoute("policy.example.test", httpPolicy)
	const url = "https://policy.example.test"
	get := func(path string, hdr ...string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("GET", url+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return e.do(req)
	}

	// The request phase's header actions reach the upstream; the response phase's the visitor.
	status, body, h := get("/app", "X-Gone", "gone")
	if status != 200 || !strings.Contains(body, "policy.example.test GET /app ") || !strings.Contains(body, "add=yes gone= ") {
		t.Fatalf("upstream: %d %q", status, body)
	}
	if h.Get("X-Res") != "added" || h.Get("Server-Secret") != "" || h.Get("App") != "policy.example.test" {
		t.Fatalf("response headers: %v", h)
	}
	var line map[string]any
	for _, l := range e.logs.FilterMessage("edge request").All() {
		line = l.ContextMap()
	}
	if meta, _ := line["policy_log"].(map[string]any); meta["team"] != "web" {
		t.Fatalf("the log action's metadata is not in the access line: %v", line)
	}

	// Order: the second rule sees the header the first added.
	if status, body, _ := get("/order"); status != 200 || body != "saw first" {
		t.Fatalf("/order: %d %q", status, body)
	}
	// deny ends the phase (the custom-response after it never runs).
	e.expectPage(e.client(), url+"/deny", http.StatusUnauthorized, "ERR_8020")
	if status, body, h := get("/custom"); status != 418 || body != "teapot" || h.Get("X-T") != "t" || h.Get("X-Res") != "" {
		t.Fatalf("/custom: %d %q %v", status, body, h)
	}
	e.expectPage(e.client(), url+"/private/x", http.StatusForbidden, "ERR_8020")
	if _, err := e.client().Get(url + "/close"); err == nil {
		t.Fatal("close-connection answered")
	}
	e.expectPage(e.client(), url+"/broken", http.StatusInternalServerError, "ERR_8022")
	if e.logs.FilterMessageSnippet("traffic policy failed to evaluate").Len() == 0 {
		t.Fatal("the expression error was not logged")
	}
	c := e.client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if status, _, h := e.get(c, url+"/old/page?x=1"); status != 301 || h.Get("Location") != url+"/new/page?x=1" || h.Get("X-R") != "r" {
		t.Fatalf("redirect: %d %v", status, h)
	}
	if status, body, _ := get("/v1/items?id=7"); status != 200 || !strings.Contains(body, "GET /v2/items ") {
		t.Fatalf("url-rewrite: %d %q", status, body)
	}
	if status, body, _ := get("/vars?q=1", "X-Probe", "1"); status != 200 || body != "all variables" {
		t.Fatalf("variables: %d %q", status, body)
	}

	// The response phase: custom-response and deny replace the upstream's answer.
	if status, body, _ := get("/replace"); status != 203 || body != "replaced" {
		t.Fatalf("/replace: %d %q", status, body)
	}
	e.expectPage(e.client(), url+"/refuse", http.StatusBadGateway, "ERR_8020")

	// compress-response: the first algorithm of the action's list the visitor accepts.
	for _, enc := range []string{"zstd", "gzip", "br"} {
		status, body, h := get("/zip", "Accept-Encoding", enc)
		plain, err := decodeBody(h.Get("Content-Encoding"), body)
		if status != 200 || err != nil || !strings.Contains(plain, "GET /zip ") {
			t.Fatalf("%s: %d %q %v", enc, status, body, err)
		}
		if want := map[string]string{"zstd": "zstd", "gzip": "gzip", "br": ""}[enc]; h.Get("Content-Encoding") != want {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q, want %q", enc, h.Get("Content-Encoding"), want)
		}
	}
}

func decodeBody(encoding, body string) (string, error) {
	var r io.Reader
	switch encoding {
	case "":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			return "", err
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer zr.Close()
		r = zr
	default:
		return "", fmt.Errorf("unexpected encoding %s", encoding)
	}
	b, err := io.ReadAll(r)
	return string(b), err
}

// TestTrafficPolicyRateLimit: a rate-limit trips past its capacity (429 ERR_8021 with
// Retry-After), per bucket key, and lets requests through again once its window passed.
func TestTrafficPolicyRateLimit(t *testing.T) {
	clk := apiservertest.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	e := newEnv(t, func(o *edge.Options) { o.Now = clk.Now })
	e.policyRoute("limited.example.test", `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: ["getReqHeader('x-key')"]}
`)
	get := func(key string) (int, http.Header) {
		req, _ := http.NewRequest("GET", "https://limited.example.test/", nil)
		req.Header.Set("X-Key", key)
		status, _, h := e.do(req)
		return status, h
	}
	for i := range 2 {
		if status, _ := get("a"); status != 200 {
			t.Fatalf("request %d within capacity: %d", i+1, status)
		}
	}
	status, h := get("a")
	if status != http.StatusTooManyRequests || h.Get("Warren-Error-Code") != "ERR_8021" || h.Get("Retry-After") != "60" {
		t.Fatalf("past capacity: %d %v", status, h)
	}
	if status, _ := get("b"); status != 200 {
		t.Fatalf("another bucket: %d", status)
	}
	clk.Add(2 * time.Minute)
	if status, _ := get("a"); status != 200 {
		t.Fatalf("after the window: %d", status)
	}
}

// TestTrafficPolicyStreams: on_tcp_connect on a TCP edge (deny by client IP,
// close-connection, log into the stream's line) and on a TLS edge (by server name).
func TestTrafficPolicyStreams(t *testing.T) {
	e := newEnv(t)
	e.labelled("tcp", map[string]string{"app": "pol"}, echo(t, "pol"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "pol"}})
	addr, port := e.reserveAddr()
	policy := func(p string) map[string]any { return map[string]any{"value": p} }
	edgeID := e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group},
		"traffic_policy": policy(`{"on_tcp_connect":[{"expressions":["inCidrRanges(conn.client_ip, ['127.0.0.0/8']) && conn.client_port > 0"],"actions":[{"type":"deny"}]}]}`)})
	expectClosed := func(what string) {
		t.Helper()
		c := e.dialTCP(port)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := c.Read(make([]byte, 16)); n > 0 || !(errors.Is(err, io.EOF) || isReset(err)) {
			t.Fatalf("%s: read %d bytes: %v", what, n, err)
		}
	}
	expectClosed("deny by client IP")
	e.api("PUT", "/edges/tcp/"+edgeID+"/traffic_policy", policy(fmt.Sprintf(`{"on_tcp_connect":[{"expressions":["conn.server_port == %d && endpoint.protocol == 'tcp' && conn.tls.sni == ''"],"actions":[{"type":"close-connection"}]}]}`, port)))
	expectClosed("close-connection")
	e.api("PUT", "/edges/tcp/"+edgeID+"/traffic_policy", policy(`{"on_tcp_connect":[
		{"expressions":["conn.client_ip == '192.0.2.1'"],"actions":[{"type":"deny"}]},
		{"actions":[{"type":"log","config":{"metadata":{"seen":"yes"}}}]}]}`))
	c := e.dialTCP(port)
	roundTrip(t, c, "hello", "pol:hello")
	c.Close()

	e.labelled("tls", map[string]string{"app": "tlspol"}, echo(t, "tls"))
	tlsGroup := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "tlspol"}})
	rule := `{"on_tcp_connect":[{"expressions":["conn.tls.sni == 'blocked.example.test' && conn.tls.version == 'TLS 1.3'"],"actions":[{"type":"deny"}]}]}`
	for _, name := range []string{"blocked.example.test", "open.example.test"} {
		e.domain(name)
		e.create("/edges/tls", map[string]any{"hostports": []string{name + ":443"}, "backend": map[string]any{"backend_id": tlsGroup}, "traffic_policy": policy(rule)})
	}
	if _, err := e.tlsDial("blocked.example.test", e.ca.pool()); err == nil {
		t.Fatal("a TLS edge served a server name its policy denies")
	}
	tc, err := e.tlsDial("open.example.test", e.ca.pool())
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, tc, "ping", "tls:ping")
	tc.Close()

	// The log action's metadata is in the TCP stream's line (written when it ends).
	deadline := time.Now().Add(20 * time.Second)
	for e.logs.FilterMessage("edge stream").FilterFieldKey("policy_log").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the log action's metadata is not in the stream's line")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTrafficPolicyRefusedAtWrite: the API refuses a bad action configuration, an action in
// a phase it does not run in, and an action this server does not run (400 ERR_2236, naming
// the phase, rule and action), and stores nothing.
func TestTrafficPolicyRefusedAtWrite(t *testing.T) {
	e := newEnv(t)
	edgeID, _ := e.httpsEdge("write.example.test", e.fixed("x"), nil)
	for i, tt := range []struct{ policy, msg string }{
		{`{"on_http_request":[{"name":"r","actions":[{"type":"custom-response","config":{"status_code":"teapot"}}]}]}`, `on_http_request rule 1 ("r"): action 1 (custom-response): config field status_code must be of type int`},
		{`{"on_http_request":[{"actions":[{"type":"redirect","config":{"from":"(","to":"/x"}}]}]}`, "action 1 (redirect): from is not a valid regular expression"},
		{`{"on_http_request":[{"actions":[{"type":"rate-limit","config":{"name":"r","algorithm":"sliding_window","capacity":0,"rate":"60s"}}]}]}`, "action 1 (rate-limit): capacity must be"},
		{`{"on_http_request":[{"actions":[{"type":"add-headers","config":{"headers":{"x":"1"},"extra":1}}]}]}`, `unknown field "extra"`},
		{`{"on_http_request":[{"actions":[{"type":"compress-response"}]}]}`, "compress-response does not run in on_http_request"},
		{`{"on_http_response":[{"actions":[{"type":"log"},{"type":"basic-auth","config":{}}]}]}`, "on_http_response rule 1: action 2 (basic-auth): this server does not run this action type"},
	} {
		// A match of its own: the policy is the only thing wrong with the route.
		body, _ := json.Marshal(map[string]any{"match_type": "path_prefix", "match": "/" + fmt.Sprint(i), "traffic_policy": map[string]any{"value": tt.policy}})
		req, _ := http.NewRequest("POST", e.srv.URL+"/edges/https/"+edgeID+"/routes", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.srv.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Service-Version", "2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ErrorCode string `json:"error_code"`
			Msg       string `json:"msg"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 400 || out.ErrorCode != "ERR_2236" || !strings.Contains(out.Msg, tt.msg) {
			t.Errorf("%s: %d %s %q, want 400 ERR_2236 saying %q", tt.policy, resp.StatusCode, out.ErrorCode, out.Msg, tt.msg)
		}
	}
	if routes := e.api("GET", "/edges/https/"+edgeID, nil)["routes"].([]any); len(routes) != 1 {
		t.Fatalf("a refused route was stored: %d routes", len(routes))
	}
}

// TestTrafficPolicyStoredUnsupported: a stored policy naming an action this server does not
// run (written past the API, as by another version) is never run without it: its route
// answers 501 ERR_8004 naming the action, its TCP edge closes its connections.
func TestTrafficPolicyStoredUnsupported(t *testing.T) {
	e := newEnv(t)
	_, routeID := e.policyRoute("stored.example.test", `{"on_http_request":[{"actions":[{"type":"log"}]}]}`)
	e.labelled("tcp", map[string]string{"app": "stored"}, echo(t, "stored"))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "stored"}})
	addr, port := e.reserveAddr()
	tcpID := e.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group},
		"traffic_policy": map[string]any{"value": `{"on_tcp_connect":[{"actions":[{"type":"log"}]}]}`}})
	roundTrip(t, e.dialTCP(port), "hi", "stored:hi")
	if status, _, _ := e.get(e.client(), "https://stored.example.test/"); status != 200 {
		t.Fatalf("before: %d", status)
	}
	rewrite := func(kind, id, policy string) {
		err := e.srv.Store.Write(t.Context(), func(tx store.Tx) error {
			o, err := tx.Get(t.Context(), kind, id)
			if err != nil {
				return err
			}
			var doc map[string]any
			if err := json.Unmarshal(o.Doc, &doc); err != nil {
				return err
			}
			doc["traffic_policy"] = map[string]any{"enabled": true, "value": policy}
			o.Doc, _ = json.Marshal(doc)
			return tx.Update(t.Context(), o)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rewrite("https_edge_route", routeID, `{"on_http_request":[{"actions":[{"type":"log"},{"type":"basic-auth","config":{"credentials":["a:b"]}}]}]}`)
	rewrite("tcp_edge", tcpID, `{"on_tcp_connect":[{"actions":[{"type":"terminate-tls"}]}]}`)
	if body := e.expectPage(e.client(), "https://stored.example.test/", http.StatusNotImplemented, "ERR_8004"); !strings.Contains(body, "basic-auth") {
		t.Fatalf("the page does not name the action: %q", body)
	}
	c := e.dialTCP(port)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if n, err := c.Read(make([]byte, 16)); n > 0 || !(errors.Is(err, io.EOF) || isReset(err)) {
		t.Fatalf("a TCP edge with an action it does not run served %d bytes: %v", n, err)
	}
}
