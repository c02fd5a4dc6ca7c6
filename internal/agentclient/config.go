package agentclient

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// Defaults of the Config members left zero.
const (
	DefaultMinBackoff       = time.Second
	DefaultMaxBackoff       = time.Minute
	DefaultHandshakeTimeout = 30 * time.Second
	// DefaultHeartbeat is used when the server's Welcome names no interval.
	DefaultHeartbeat = 10 * time.Second
	// MaxConnections bounds Config.Connections: each session holds a socket and its tunnels
	// on a replica.
	MaxConnections = 16
)

// Protos are the tunnel protocols an agent may ask for.
var Protos = []string{"http", "https", "tcp", "tls"}

// Config says where the agent connects, as whom, and which tunnels it asks for.
type Config struct {
	// ServerURL is the server's base URL (http:// or https://; ws:// and wss:// too); the
	// agent dials <ServerURL>/agent/connect.
	ServerURL string
	// Authtoken is a tunnel credential's token, sent as a Bearer token and never logged.
	Authtoken string

	// What the agent announces in its Hello.
	AgentVersion string
	OS           string // default runtime.GOOS
	Metadata     string
	Region       string

	// Tunnels are bound, in this order, in every session.
	Tunnels []TunnelConfig

	// Connections is how many sessions the agent keeps at once, each on another replica,
	// each binding every tunnel (0 means 1, at most MaxConnections): the first through
	// ServerURL, the others at the addresses that the replicas advertise
	// (agentproto.Replica), so that a replica of several behind one load balancer finds a
	// tunnel of its own. Replicas that advertise none are reached through ServerURL only.
	Connections int

	Logger     *zap.Logger  // default: no logs
	HTTPClient *http.Client // default http.DefaultClient; its Timeout must be 0 (the connection lives on)

	// Reconnection backoff: the wait doubles from MinBackoff up to MaxBackoff, with jitter.
	MinBackoff, MaxBackoff time.Duration
	// HandshakeTimeout bounds the dial and the wait for Welcome.
	HandshakeTimeout time.Duration

	// Forward says how visitor streams reach the local apps; its Logger defaults to Logger.
	Forward ForwardOptions
}

// TunnelConfig is one tunnel the agent asks for: exactly one of Hostname (http, https,
// tls), Addr (tcp) or Labels (a tunnel-group tunnel, any proto).
type TunnelConfig struct {
	Proto      string
	Hostname   string
	Addr       string
	Labels     map[string]string
	ForwardsTo string
	Bindings   []string // endpoint bindings; the server defaults to ["public"]
}

// Validate checks what can be checked without the server: the server still checks the
// hostname, address and labels against the account and the credential's ACL.
func (t TunnelConfig) Validate() error {
	set := 0
	for _, v := range []bool{t.Hostname != "", t.Addr != "", len(t.Labels) > 0} {
		if v {
			set++
		}
	}
	switch {
	case !slices.Contains(Protos, t.Proto):
		return fmt.Errorf("proto %q is not one of %s", t.Proto, strings.Join(Protos, ", "))
	case set != 1:
		return errors.New("a tunnel needs exactly one of a hostname, an address or labels")
	case t.Hostname != "" && t.Proto == "tcp":
		return errors.New("a tcp tunnel binds an address, not a hostname")
	case t.Addr != "" && t.Proto != "tcp":
		return fmt.Errorf("an address is bound with proto tcp, not %s", t.Proto)
	case t.ForwardsTo == "":
		return errors.New("forwards_to is empty")
	}
	if t.Addr != "" {
		if _, port, err := net.SplitHostPort(t.Addr); err != nil || port == "" {
			return fmt.Errorf("address %q is not host:port", t.Addr)
		}
	}
	for k, v := range t.Labels {
		if k == "" || v == "" || strings.Contains(k, "=") || strings.Contains(v, "=") {
			return fmt.Errorf("label %q=%q: keys and values are non-empty and hold no '='", k, v)
		}
	}
	_, _, err := parseForwardsTo(t.Proto, t.ForwardsTo)
	return err
}

// connectURL is where the agent dials: the server URL with ws/wss and the protocol's path.
func connectURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("server URL %q is not an http:// or https:// URL", server)
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("server URL %q is not an http:// or https:// URL", server)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("server URL %q may hold no user, query or fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + agentproto.Path
	u.RawPath = ""
	return u.String(), nil
}

// withDefaults checks cfg and fills its zero members.
func (cfg Config) withDefaults() (Config, string, error) {
	dialURL, err := connectURL(cfg.ServerURL)
	if err != nil {
		return cfg, "", err
	}
	if cfg.Authtoken == "" {
		return cfg, "", errors.New("the authtoken is empty")
	}
	for i, t := range cfg.Tunnels {
		if err := t.Validate(); err != nil {
			return cfg, "", fmt.Errorf("tunnel %d: %w", i+1, err)
		}
	}
	if cfg.Connections < 0 || cfg.Connections > MaxConnections {
		return cfg, "", fmt.Errorf("connections %d is not between 1 and %d", cfg.Connections, MaxConnections)
	}
	cfg.Connections = max(cfg.Connections, 1)
	if cfg.OS == "" {
		cfg.OS = runtime.GOOS
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Forward.Logger == nil {
		cfg.Forward.Logger = cfg.Logger
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		return cfg, "", fmt.Errorf("the longest backoff %s is shorter than the shortest %s", cfg.MaxBackoff, cfg.MinBackoff)
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return cfg, dialURL, nil
}
