package agentproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
	"go.uber.org/zap"
)

// SubprotocolV2 names protocol version 2: the WebSocket carries binary frames of a yamux
// session instead of JSON text frames. The agent opens the first stream, the control
// stream, and sends on it the Messages of version 1 (ControlConn); the server opens one
// stream per visitor connection, each starting with a StreamHeader, which the agent
// answers with a StreamResult. The agent opens no other stream and the server accepts no
// other.
const SubprotocolV2 = "warren-agent.v2"

// StreamWindow is each stream's receive window: how many bytes one stream may have in
// flight before its reader acknowledges them. yamux acknowledges once half the window is
// read, so a stream moves between half a window and a window per round trip: yamux's
// default 256 KiB caps it at 21-42 Mbit/s at 50 ms (frp's slow tcp_mux, fatedier/frp#2987);
// 8 MiB gives at least 1 Gbit/s up to 33 ms and 670 Mbit/s at 50 ms. The window is also
// what a reader that does not keep up (a slow visitor, a slow upstream) makes its end
// buffer, per stream: memory is taken only as data arrives, and a session holds at most
// a window per open stream.
const StreamWindow = 8 << 20

// streamBacklog bounds the streams opened but not yet accepted by the peer: visitor
// connections beyond it are refused at once (reset) rather than queued.
const streamBacklog = 256

// streamCloseTimeout is how long a stream closed on one side waits for the other side's
// close before both are dropped: a half-closed visitor connection lives that long at most.
const streamCloseTimeout = 5 * time.Minute

// MuxOptions configure either end's multiplexer.
type MuxOptions struct {
	// Heartbeat is the session's heartbeat interval (Welcome's heartbeat_ms). The
	// multiplexer pings that often and, like the control Heartbeat, gives up on a peer
	// silent for three intervals; a frame that cannot be sent within three fails, and a
	// stream the peer does not accept within three ends the session.
	Heartbeat time.Duration
	// Log receives the multiplexer's own complaints (at warn); nil discards them.
	Log *zap.Logger
}

func (o MuxOptions) config() (*yamux.Config, error) {
	if o.Heartbeat <= 0 {
		return nil, errors.New("agentproto: the multiplexer needs a heartbeat interval")
	}
	c := &yamux.Config{
		AcceptBacklog:          streamBacklog,
		EnableKeepAlive:        true,
		KeepAliveInterval:      o.Heartbeat,
		ConnectionWriteTimeout: 3 * o.Heartbeat,
		MaxStreamWindowSize:    StreamWindow,
		StreamOpenTimeout:      3 * o.Heartbeat,
		StreamCloseTimeout:     streamCloseTimeout,
		LogOutput:              io.Discard,
	}
	if o.Log != nil {
		std, err := zap.NewStdLogAt(o.Log.Named("yamux"), zap.WarnLevel)
		if err != nil {
			return nil, err
		}
		c.LogOutput, c.Logger = nil, std
	}
	return c, nil
}

// mux is what both ends share.
type mux struct {
	sess *yamux.Session
}

// newMux runs a yamux session over ws, which must have chosen SubprotocolV2; ctx bounds
// the session's life.
func newMux(ctx context.Context, ws *websocket.Conn, o MuxOptions, start func(io.ReadWriteCloser, *yamux.Config) (*yamux.Session, error)) (mux, error) {
	if got := ws.Subprotocol(); got != SubprotocolV2 {
		return mux{}, fmt.Errorf("agentproto: the WebSocket speaks subprotocol %q, not %s", got, SubprotocolV2)
	}
	cfg, err := o.config()
	if err != nil {
		return mux{}, err
	}
	sess, err := start(websocket.NetConn(ctx, ws, websocket.MessageBinary), cfg)
	if err != nil {
		return mux{}, err
	}
	return mux{sess: sess}, nil
}

// Close ends the session: every stream's Read and Write fail, the WebSocket is closed.
func (m *mux) Close() error { return m.sess.Close() }

// Done is closed when the session has ended, by either side or a broken WebSocket.
func (m *mux) Done() <-chan struct{} { return m.sess.CloseChan() }

// ServerMux is the server's end of a version 2 connection.
type ServerMux struct {
	mux
	log *zap.Logger
}

// NewServerMux starts the server's end over an accepted WebSocket.
func NewServerMux(ctx context.Context, ws *websocket.Conn, o MuxOptions) (*ServerMux, error) {
	m, err := newMux(ctx, ws, o, yamux.Server)
	if err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	return &ServerMux{mux: m, log: log}, nil
}

// AcceptControl waits for the agent's first stream, the control stream; call it once.
// Any later stream the agent opens breaks the protocol and ends the session.
func (m *ServerMux) AcceptControl(ctx context.Context) (*ControlConn, error) {
	st, err := m.sess.AcceptStreamWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("agentproto: waiting for the control stream: %w", err)
	}
	go m.refuseStreams()
	return NewControlConn(st), nil
}

// refuseStreams ends the session at the first stream the agent opens after the control
// stream: left unaccepted, each would hold a backlog slot and its window's worth of data.
func (m *ServerMux) refuseStreams() {
	if st, err := m.sess.AcceptStream(); err == nil {
		m.log.Warn("agent opened a stream other than the control stream; ending the session", zap.Uint32("stream_id", st.StreamID()))
		_ = m.sess.Close()
	}
}

// OpenStream opens a visitor stream and writes h first. It waits while streamBacklog
// streams are still unaccepted by the agent. The agent's StreamResult comes first on the
// stream: read it with ReadStreamResult.
func (m *ServerMux) OpenStream(h StreamHeader) (net.Conn, error) {
	header, err := h.encode()
	if err != nil {
		return nil, err
	}
	st, err := m.sess.OpenStream()
	if err != nil {
		return nil, fmt.Errorf("agentproto: opening a visitor stream: %w", err)
	}
	if _, err := st.Write(header); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("agentproto: writing the stream header: %w", err)
	}
	return st, nil
}

// AgentMux is the agent's end of a version 2 connection.
type AgentMux struct {
	mux
}

// NewAgentMux starts the agent's end over a dialed WebSocket; it refuses one on which the
// server did not choose SubprotocolV2.
func NewAgentMux(ctx context.Context, ws *websocket.Conn, o MuxOptions) (*AgentMux, error) {
	m, err := newMux(ctx, ws, o, yamux.Client)
	if err != nil {
		return nil, err
	}
	return &AgentMux{mux: m}, nil
}

// OpenControl opens the control stream; it must be the agent's first and only stream.
func (m *AgentMux) OpenControl() (*ControlConn, error) {
	st, err := m.sess.OpenStream()
	if err != nil {
		return nil, fmt.Errorf("agentproto: opening the control stream: %w", err)
	}
	return NewControlConn(st), nil
}

// AcceptStream waits for the next visitor stream. Its StreamHeader comes first: read it
// with ReadStreamHeader under a read deadline, and answer with WriteStreamResult before any
// byte of the app.
func (m *AgentMux) AcceptStream(ctx context.Context) (net.Conn, error) {
	st, err := m.sess.AcceptStreamWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("agentproto: accepting a visitor stream: %w", err)
	}
	return st, nil
}

// OfferedSubprotocols lists the subprotocols a WebSocket handshake offers.
func OfferedSubprotocols(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// SubprotocolRefusal is "" when a handshake offers SubprotocolV2, else the sentence the
// server answers it with (426 Upgrade Required, ERR_215): it names the version the agent
// needs, and the agent's own when that is an older version of this protocol.
func SubprotocolRefusal(h http.Header) string {
	offered := OfferedSubprotocols(h)
	switch {
	case slices.Contains(offered, SubprotocolV2):
		return ""
	case slices.Contains(offered, Subprotocol):
		return fmt.Sprintf("The agent speaks %s; this server needs %s: update the agent.", Subprotocol, SubprotocolV2)
	default:
		return fmt.Sprintf("The agent must speak the WebSocket subprotocol %s.", SubprotocolV2)
	}
}
