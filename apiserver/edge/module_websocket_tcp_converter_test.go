package edge_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
)

// TestWebsocketTCPConverter: a WebSocket client reaches a TCP echo app through a tcp tunnel
// (and through a static backend): its binary and text messages reach the app as bytes and
// the app's bytes come back as binary messages; a plain GET is refused with 426 ERR_8015.
func TestWebsocketTCPConverter(t *testing.T) {
	e := newEnv(t, func(o *edge.Options) { o.AllowPrivate = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	labels := map[string]string{"app": "wsecho"}
	e.labelled("tcp", labels, echo(t, ""))
	group := e.create("/backends/tunnel_group", map[string]any{"labels": labels})
	// compression on the same route must let the handshake through.
	e.httpsEdge("ws.example.test", group, map[string]any{"websocket_tcp_converter": map[string]any{}, "compression": map[string]any{}})
	static := e.create("/backends/static", map[string]any{"address": echo(t, "static")})
	e.httpsEdge("wsstatic.example.test", static, map[string]any{"websocket_tcp_converter": map[string]any{}})

	ws := e.dialWebSocket("wss://ws.example.test/")
	echoes(t, ws, websocket.MessageBinary, "binary \x00\xff bytes", "binary \x00\xff bytes")
	echoes(t, ws, websocket.MessageText, "text too", "text too")
	if err := ws.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatalf("closing: %v", err)
	}

	ws = e.dialWebSocket("wss://wsstatic.example.test/")
	echoes(t, ws, websocket.MessageBinary, "hello", "static:hello")
	// A message over the bound closes the connection.
	ws.SetReadLimit(-1)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageBinary, make([]byte, 1<<20+1)); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Fatalf("after a message over 1 MiB: %v", err)
			}
			break
		}
	}

	// The upstream closing closes the WebSocket normally, after its last bytes.
	bye := listen(t)
	go func() {
		c, err := bye.Accept()
		if err == nil {
			c.Write([]byte("bye"))
			c.Close()
		}
	}()
	t.Cleanup(func() { bye.Close() })
	e.httpsEdge("wsbye.example.test", e.create("/backends/static", map[string]any{"address": bye.Addr().String()}), map[string]any{"websocket_tcp_converter": map[string]any{}})
	ws = e.dialWebSocket("wss://wsbye.example.test/")
	if _, b, err := ws.Read(ctx); err != nil || string(b) != "bye" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the upstream closed: %v", err)
	}
	// Every connection ended on the edge too.
	deadline := time.Now().Add(20 * time.Second)
	for e.logs.FilterMessage("edge websocket").Len() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 WebSocket connections ended at the edge", e.logs.FilterMessage("edge websocket").Len())
		}
		time.Sleep(5 * time.Millisecond)
	}

	body := e.expectPage(e.client(), "https://ws.example.test/", http.StatusUpgradeRequired, "ERR_8015")
	if body == "" {
		t.Fatal("no page")
	}
}

func (e *env) dialWebSocket(url string) *websocket.Conn {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 20*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: e.client(), HTTPHeader: http.Header{"Accept-Encoding": {"gzip, zstd"}}})
	if err != nil {
		e.t.Fatalf("dial %s: %v (%+v)", url, err, resp)
	}
	e.t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// echoes sends msg as a message of typ and reads binary messages until want's bytes came back.
func echoes(t *testing.T, ws *websocket.Conn, typ websocket.MessageType, msg, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := ws.Write(ctx, typ, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < len(want) {
		typ, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		if typ != websocket.MessageBinary {
			t.Fatalf("a %v message from the edge", typ)
		}
		got = append(got, b...)
	}
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
