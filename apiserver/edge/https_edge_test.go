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
