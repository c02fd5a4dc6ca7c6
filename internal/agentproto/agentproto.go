// Package agentproto is Warren's agent control protocol: the messages an agent and the server
// exchange over one WebSocket. It carries no traffic; it opens tunnel sessions and tunnels
// and carries the session commands (details.md §6.12).
//
// The agent dials GET <server>/agent/connect with "Authorization: Bearer <tunnel credential
// token>" and the subprotocol Subprotocol. Every message is one JSON text frame with a
// "type"; requests carry an "id" the answer repeats. The agent speaks first (Hello); the
// server answers Welcome (or Error and closes). Then the agent binds tunnels (Bind → Bound or
// Error), either side sends Heartbeat and the other answers it, and the server sends Command
// (restart, stop, update), which the agent answers with CommandResult.
//
// Version 2 (SubprotocolV2, mux.go) carries these messages on a control stream and the
// traffic on one stream per visitor connection, which the server opens: it writes a
// StreamHeader first; the agent dials the tunnel's forwards_to and answers with a
// StreamResult (one byte 0 when connected, else a code and a short reason) before any byte
// of the app, so that the server tells an app that is down from one that answered
// (stream.go).
package agentproto

// Subprotocol names this protocol's version in the WebSocket handshake; a server that does
// not speak it refuses the connection.
const Subprotocol = "warren-agent.v1"

// Path is where agents connect.
const Path = "/agent/connect"

// Message types.
const (
	TypeHello         = "hello"
	TypeWelcome       = "welcome"
	TypeBind          = "bind"
	TypeBound         = "bound"
	TypeUnbind        = "unbind"
	TypeHeartbeat     = "heartbeat"
	TypeHeartbeatAck  = "heartbeat_ack"
	TypeCommand       = "command"
	TypeCommandResult = "command_result"
	TypeError         = "error"
)

// Error codes that mean "not now" rather than "never": the server refuses a session while
// the credential or its account holds as many sessions as it may (ErrTooManySessions), or
// has started as many as it may lately (ErrSessionRate). They come with HTTP 429 and
// Retry-After at the handshake, or, for ErrTooManySessions, in an Error answering the Hello
// when another agent took the last session in between. An agent retries them with backoff.
const (
	ErrTooManySessions = "ERR_225"
	ErrSessionRate     = "ERR_226"
)

// Commands the server sends (POST /tunnel_sessions/{id}/<command>).
const (
	CommandRestart = "restart" // reconnect with a new session
	CommandStop    = "stop"    // exit
	CommandUpdate  = "update"  // update within the major version, if one exists
)

// MaxInstance bounds Message.Instance.
const MaxInstance = 64

// Replica is a live server replica and the base URL at which agents reach it directly.
type Replica struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Message is every message: Type says which members are set.
type Message struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"` // a request's correlation ID, repeated by its answer

	// Hello (agent → server).
	AgentVersion string `json:"agent_version,omitempty"`
	OS           string `json:"os,omitempty"`
	Metadata     string `json:"metadata,omitempty"`
	Region       string `json:"region,omitempty"`
	// Instance names one agent process across the sessions it holds at once, one per
	// replica (at most MaxInstance bytes of [A-Za-z0-9_-]): the tunnels one instance binds
	// on several of its sessions share their hostnames and addresses, which stay taken for
	// any other agent. "" (an older agent) shares nothing.
	Instance string `json:"instance,omitempty"`

	// Welcome (server → agent).
	SessionID string `json:"session_id,omitempty"`
	// Replica is the server replica that holds the session.
	Replica string `json:"replica,omitempty"`
	// Replicas are the live replicas that agents may reach directly (each with its agent
	// address), in Welcome and in the server's Heartbeat: an agent keeping sessions on
	// several replicas dials those it holds none on.
	Replicas []Replica `json:"replicas,omitempty"`
	// HeartbeatMillis is how often each side must hear from the other, in milliseconds;
	// after three
	// intervals of silence the peer is taken for dead.
	HeartbeatMillis int `json:"heartbeat_ms,omitempty"`

	// Bind (agent → server): one of Hostname (http, https, tls), Addr (tcp) or Labels.
	Proto      string            `json:"proto,omitempty"`
	Hostname   string            `json:"hostname,omitempty"`
	Addr       string            `json:"addr,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	ForwardsTo string            `json:"forwards_to,omitempty"`
	// Bindings of the tunnel's endpoint: "public" (the default), "internal" or
	// "orchestrator" (endpoints an orchestrator operator's selectors may bind, §7.5).
	Bindings []string `json:"bindings,omitempty"`

	// Bound (server → agent) and Unbind (agent → server).
	TunnelID   string `json:"tunnel_id,omitempty"`
	EndpointID string `json:"endpoint_id,omitempty"`
	URL        string `json:"url,omitempty"`

	// Command (server → agent).
	Command string `json:"command,omitempty"`

	// CommandResult (agent → server) and Error (either way): Error is "" on success.
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
}
