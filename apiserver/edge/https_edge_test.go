package edge_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPSEdgeTunnelGroup: an HTTPS edge on a reserved domain with an uploaded certificate
// sends a request through a tunnel-group backend to the app behind a labelled tunnel.
func TestHTTPSEdgeTunnelGroup(t *testing.T) {
	e := newEnv(t)
	e.tunnel("shop", map[string]string{"app": "shop"})
	e.tunnel("other", map[string]string{"app": "other"})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "shop"}})
	e.httpsEdge("shop.example.test", group, nil)
	for range 5 {
		status, body, _ := e.get(e.client(), "https://shop.example.test/cart?x=1")
		if status != 200 || !strings.HasPrefix(body, "shop GET /cart xff=127.0.0.1 proto=https host=shop.example.test fwdhost=shop.example.test") {
			t.Fatalf("through the edge: %d %q", status, body)
		}
	}
}

// TestUnknownHost: a name nothing serves gets 404 when the edge has a certificate for it,
// and the TLS handshake fails when it has none.
func TestUnknownHost(t *testing.T) {
	e := newEnv(t)
	e.domain("idle.example.test")
	e.expectPage(e.client(), "https://idle.example.test/", http.StatusNotFound, "ERR_8001")
	if _, err := e.client().Get("https://nothing.example.test/"); err == nil {
		t.Fatal("a name without a certificate was served")
	}
	resp, err := http.Get("http://" + e.http.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Warren-Error-Code") != "ERR_8001" {
		t.Fatalf("HTTP listener, unknown host: %d %s", resp.StatusCode, resp.Header.Get("Warren-Error-Code"))
	}
}

// TestRouteOrder: exact paths before prefixes, longest prefix first, whatever the creation
// order; a path no route matches gets 404 ERR_8002.
func TestRouteOrder(t *testing.T) {
	e := newEnv(t)
	answer := func(body string) string {
		return e.create("/backends/http_response", map[string]any{"status_code": 200, "body": body})
	}
	e.domain("order.example.test")
	edgeID := e.create("/edges/https", map[string]any{"hostports": []string{"order.example.test:443"}})
	for _, r := range []struct{ typ, match, body string }{
		{"path_prefix", "/a", "prefix /a"},
		{"path_prefix", "/a/b", "prefix /a/b"},
		{"exact_path", "/a/b/cd", "exact /a/b/cd"},
		{"path_prefix", "/a/b/c", "prefix /a/b/c"},
	} {
		e.create("/edges/https/"+edgeID+"/routes", map[string]any{"match_type": r.typ, "match": r.match, "backend": map[string]any{"backend_id": answer(r.body)}})
	}
	c := e.client()
	for path, want := range map[string]string{
		"/a": "prefix /a", "/ab": "prefix /a", "/a/b": "prefix /a/b", "/a/bc": "prefix /a/b",
		"/a/b/cd": "exact /a/b/cd", "/a/b/cde": "prefix /a/b/c", "/a/b/c": "prefix /a/b/c",
	} {
		if status, body, _ := e.get(c, "https://order.example.test"+path); status != 200 || body != want {
			t.Errorf("%s: %d %q, want %q", path, status, body, want)
		}
	}
	e.expectPage(c, "https://order.example.test/b", http.StatusNotFound, "ERR_8002")
}

// TestHTTPResponseBackend: status, headers and body, with the response_headers module.
func TestHTTPResponseBackend(t *testing.T) {
	e := newEnv(t)
	b := e.create("/backends/http_response", map[string]any{"status_code": 418, "body": "teapot", "headers": map[string]string{"X-Fixed": "1", "X-Drop": "d"}})
	e.httpsEdge("fixed.example.test", b, map[string]any{"response_headers": map[string]any{"add": map[string]string{"X-Extra": "e"}, "remove": []string{"X-Drop"}}})
	status, body, h := e.get(e.client(), "https://fixed.example.test/x")
	for _, l := range e.logs.All() {
		t.Log(l.Message, l.ContextMap())
	}
	if status != 418 || body != "teapot" || h.Get("X-Fixed") != "1" || h.Get("X-Extra") != "e" || h.Get("X-Drop") != "" {
		t.Fatalf("fixed response: %d %q %v", status, body, h)
	}
}

// TestHeaderModules: request headers added and removed on the way up, response headers on
// the way down.
func TestHeaderModules(t *testing.T) {
	e := newEnv(t)
	e.tunnel("hdr", map[string]string{"app": "hdr"})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "hdr"}})
	e.httpsEdge("hdr.example.test", group, map[string]any{
		"request_headers":  map[string]any{"add": map[string]string{"X-Added": "yes"}, "remove": []string{"X-Gone"}},
		"response_headers": map[string]any{"add": map[string]string{"X-Resp": "r"}, "remove": []string{"Server-Secret"}},
	})
	status, body, h := e.get(e.client(), "https://hdr.example.test/", "X-Gone", "visitor", "X-Added", "forged")
	if status != 200 || !strings.Contains(body, "add=yes gone= ") || h.Get("X-Resp") != "r" || h.Get("Server-Secret") != "" || h.Get("App") != "hdr" {
		t.Fatalf("header modules: %d %q %v", status, body, h)
	}
}

// TestForwardedHeadersNotForgeable: X-Forwarded-* from the visitor are replaced by the edge's.
func TestForwardedHeadersNotForgeable(t *testing.T) {
	e := newEnv(t)
	e.tunnel("fwd", map[string]string{"app": "fwd"})
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "fwd"}})
	e.httpsEdge("fwd.example.test", group, nil)
	_, body, _ := e.get(e.client(), "https://fwd.example.test/", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-Proto", "gopher", "X-Forwarded-Host", "evil.test", "Forwarded", "for=6.6.6.6")
	if !strings.Contains(body, "xff=127.0.0.1 proto=https host=fwd.example.test fwdhost=fwd.example.test ") {
		t.Fatalf("forged X-Forwarded-* reached the app: %q", body)
	}
}

// TestNoTunnelAndUpstreamFailure: a tunnel group with no tunnel online is 503 ERR_8005; a
// tunnel whose app is down is 502 ERR_8006; a route without a backend 503 ERR_8008.
func TestNoTunnelAndUpstreamFailure(t *testing.T) {
	e := newEnv(t)
	none := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "nobody"}})
	e.httpsEdge("none.example.test", none, nil)
	e.expectPage(e.client(), "https://none.example.test/", http.StatusServiceUnavailable, "ERR_8005")

	l := listen(t)
	dead := l.Addr().String()
	l.Close()
	e.labelled("http", map[string]string{"app": "dead"}, "http://"+dead)
	group := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "dead"}})
	e.httpsEdge("dead.example.test", group, nil)
	e.expectPage(e.client(), "https://dead.example.test/", http.StatusBadGateway, "ERR_8006")

	e.domain("bare.example.test")
	edgeID := e.create("/edges/https", map[string]any{"hostports": []string{"bare.example.test:443"}})
	e.create("/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/"})
	e.expectPage(e.client(), "https://bare.example.test/", http.StatusServiceUnavailable, "ERR_8008")
}

// TestWildcardDomain: a name under a wildcard reservation is served with the wildcard's
// certificate.
func TestWildcardDomain(t *testing.T) {
	e := newEnv(t)
	e.domain("*.wild.example.test")
	edgeID := e.create("/edges/https", map[string]any{"hostports": []string{"shop.wild.example.test:443"}})
	e.create("/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": e.fixed("wild")}})
	if status, body, _ := e.get(e.client(), "https://shop.wild.example.test/"); status != 200 || body != "wild" {
		t.Fatalf("under a wildcard: %d %q", status, body)
	}
	e.expectPage(e.client(), "https://other.wild.example.test/", http.StatusNotFound, "ERR_8001")
}

// TestDisabledAccountRefused: an operator disables the account; its edges refuse every
// visitor with 403 ERR_8016, a fixed-answer backend included (no agent needed), and serve
// again once it is enabled. Nothing else changed.
func TestDisabledAccountRefused(t *testing.T) {
	e := newEnv(t)
	e.httpsEdge("held.example.test", e.fixed("served"), nil)
	c := e.client()
	if status, body, _ := e.get(c, "https://held.example.test/"); status != 200 || body != "served" {
		t.Fatalf("before: %d %q", status, body)
	}
	operator := func(action string) {
		t.Helper()
		req, _ := http.NewRequest("POST", e.srv.URL+"/_admin/accounts/"+e.srv.AccountID+"/"+action, nil)
		req.Header.Set("Authorization", "Bearer "+e.srv.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", action, resp.StatusCode)
		}
	}
	operator("disable")
	e.expectPage(c, "https://held.example.test/", http.StatusForbidden, "ERR_8016")
	operator("enable")
	if status, body, _ := e.get(c, "https://held.example.test/"); status != 200 || body != "served" {
		t.Fatalf("enabled again: %d %q", status, body)
	}
}
