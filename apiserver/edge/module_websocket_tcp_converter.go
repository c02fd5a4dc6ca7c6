package edge

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"
	"golang.org/x/net/http/httpguts"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/netcopy"
)

// websocketConverter is a route's websocket_tcp_converter step, in place of the backend:
// a WebSocket client reaches a TCP upstream (github.com/coder/websocket).
//
// A request that is not a WebSocket upgrade (Connection: upgrade, Upgrade: websocket) gets
// 426 ERR_8015. For an upgrade, the edge first opens a TCP stream to the route's backend
// the way a TCP edge does (a tunnel, with the tunnel's own proto, normally tcp; a static
// address; the next upstream when one cannot be reached), so that a backend that is down
// gets the usual 502 ERR_8006 or 503 ERR_8005 page; then it accepts the upgrade. A
// handshake the WebSocket library refuses (a bad key or version, an Origin whose host is
// not the request's) gets its plain 400 or 403 answer. No subprotocol is chosen; no
// compression is negotiated.
//
// Then the bytes of every message the client sends, binary or text, are written to the
// stream as they are (messages leave no boundary in it), and whatever the upstream sends
// comes back as binary messages, one per read. A message over wsMaxMessage bytes closes
// the connection (1009). When the upstream closes, the client gets a normal close (1000);
// when the client closes, the stream is closed. Nothing moving either way for the edge's
// idle timeout closes both.
type websocketConverter struct {
	backend backend // nil: no backend module, or disabled
}

// wsMaxMessage bounds one message from the client.
const wsMaxMessage = 1 << 20

// websocketConverterModule compiles a websocket_tcp_converter module with the route's
// backend; nil when off. A backend that does not compile fails the route when the route
// compiles it for itself (route).
func (c *compiler) websocketConverterModule(account string, route *api.HTTPSEdgeRoute) *websocketConverter {
	m := route.WebsocketTCPConverter
	if m == nil || !m.Enabled {
		return nil
	}
	b, _ := c.backendModule(account, route.Backend)
	return &websocketConverter{backend: b}
}

func (wc *websocketConverter) serve(w http.ResponseWriter, r *http.Request, x *exchange, _ handler) {
	if !upgrading(r) || !httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket") {
		w.Header().Set("Upgrade", "websocket")
		x.refuse(w, http.StatusUpgradeRequired, errNotWebSocket, "This route carries WebSocket connections only.")
		return
	}
	if wc.backend == nil {
		x.refuse(w, http.StatusServiceUnavailable, errNoBackend, "The route has no backend.")
		return
	}
	ups := wc.backend.plan(x.e.planner())
	if len(ups) == 0 {
		x.refuse(w, http.StatusServiceUnavailable, errNoTunnel, "No tunnel is online for this address.")
		return
	}
	v := streamVisit{edgeID: x.v.edgeID, hostport: x.v.hostport, client: x.v.client, proto: "tcp"}
	var up net.Conn
	var err error
	for _, u := range ups {
		if up, err = x.e.dialStream(u, v); err == nil {
			break
		}
	}
	if up == nil {
		x.e.log.Debug("edge: websocket upstream", zap.String("route_id", x.v.routeID), zap.Error(err))
		x.refuse(w, http.StatusBadGateway, errUpstream, "The upstream could not be reached or failed.")
		return
	}
	defer up.Close()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered
	}
	start := time.Now()
	in, out := x.e.carry(ws, up)
	x.e.log.Info("edge websocket", zap.String("edge_id", x.v.edgeID), zap.String("route_id", x.v.routeID),
		zap.String("client_ip", x.v.client.Addr().String()), zap.Duration("duration", time.Since(start)),
		zap.Int64("bytes_in", in), zap.Int64("bytes_out", out))
}

// carry copies the client's messages to up and up's bytes to the client until either ends,
// or nothing moves either way for IdleTimeout; it returns the bytes from the client (in)
// and to it (out).
func (e *Edge) carry(ws *websocket.Conn, up net.Conn) (in, out int64) {
	ws.SetReadLimit(wsMaxMessage)
	closeBoth := func() { _ = ws.CloseNow(); _ = up.Close() }
	idle := newIdleTimer(e.opts.IdleTimeout, closeBoth)
	defer idle.stop()
	// Close ends the edge's connections too; the request's context no longer does once
	// the connection is hijacked.
	ctx, cancel := context.WithCancel(e.closeCtx)
	defer cancel()
	defer context.AfterFunc(ctx, closeBoth)()
	done := make(chan int64, 1)
	go func() {
		var n int64
		for {
			_, msg, err := ws.Reader(ctx)
			if err != nil {
				break
			}
			m, err := netcopy.Copy(idleWriter{up, idle}, msg)
			n += m
			if err != nil {
				break
			}
		}
		_ = up.Close() // the client closed: nothing more can reach it
		done <- n
	}()
	out, err := netcopy.Copy(idleWriter{wsWriter{ctx, ws}, idle}, up)
	if err == nil {
		_ = ws.Close(websocket.StatusNormalClosure, "")
	} else {
		_ = ws.CloseNow()
	}
	return <-done, out
}

// upgrading is true for a request that asks to switch protocols (a WebSocket handshake).
func upgrading(r *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(r.Header["Connection"], "upgrade")
}

// wsWriter writes each Write as one binary message.
type wsWriter struct {
	ctx context.Context
	ws  *websocket.Conn
}

func (w wsWriter) Write(p []byte) (int, error) {
	if err := w.ws.Write(w.ctx, websocket.MessageBinary, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
