// Command warren-agent connects to a Warren server as an agent: it opens a tunnel session,
// binds its tunnels, answers the session commands (restart, stop, update) and carries the
// visitor streams the server opens to the local app its tunnels forward to.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/cliflags"
	"github.com/warrenhq/terraform-provider-warren/internal/inspect"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `warren-agent connects to a Warren server as an agent: it opens a tunnel session and
binds tunnels, stays connected (reconnecting with backoff), and exits 0 when the server
stops it (POST /tunnel_sessions/{id}/stop).

Usage:
  warren-agent --server URL --authtoken TOKEN --forwards-to URL
               [--hostname HOST | --addr HOST:PORT] [--label KEY=VALUE ...] [flags]
  warren-agent version      print the version (also --version)
  warren-agent help         print this help (also --help, -h)

--hostname or --addr binds a tunnel on that reserved domain or address; --label binds a
tunnel for the tunnel-group backends whose labels it matches. Given both, the agent binds
both tunnels, forwarding to the same --forwards-to.

--forwards-to names the local app: for http and https tunnels http://host:port,
https://host:port (TLS to the app; --upstream-ca trusts a private CA), host:port or a port
on localhost; for tcp and tls tunnels host:port or a port, to which the visitor's bytes go
as they are (--proxy-protocol puts a PROXY protocol v2 header naming the visitor first).

Every flag can also be set with the environment variable shown in brackets; a flag given on
the command line wins over the environment.

Flags:
`

// Exit codes.
const (
	exitOK     = 0 // stopped by the server, or by SIGINT/SIGTERM
	exitFailed = 1 // the server refused the agent or its tunnels
	exitUsage  = 2 // the command line or the environment is wrong; nothing was dialed
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command: it runs the agent until the server stops it or ctx ends, and
// returns the exit code.
func run(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "help") {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "warren-agent: %s takes no arguments\n\n", args[0])
			printUsage(stderr)
			return exitUsage
		}
		if args[0] == "version" {
			fmt.Fprintln(stdout, version)
		} else {
			printUsage(stdout)
		}
		return exitOK
	}
	cfg, err := parseFlags(args, env, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout)
		return exitOK
	case errors.Is(err, cliflags.ErrUsage):
		fmt.Fprintln(stderr)
		printUsage(stderr) // after the line saying what is wrong
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "warren-agent: %v\nRun 'warren-agent --help' for the flags.\n", err)
		return exitUsage
	case cfg.showVersion:
		fmt.Fprintln(stdout, version)
		return exitOK
	}

	log := zaplog.New(cfg.level, stderr)
	defer func() { _ = log.Sync() }()
	clientCfg := cfg.client(log)
	var inspector *http.Server
	if cfg.inspect != "" {
		in := inspect.New(inspect.Options{ShowSecrets: cfg.inspectShowSecrets, AllowRemote: cfg.inspectAllowRemote})
		clientCfg.Forward.Inspector = in
		ln, err := net.Listen("tcp", cfg.inspect)
		if err != nil {
			fmt.Fprintf(stderr, "warren-agent: --inspect: %v\n", err)
			return exitFailed
		}
		inspector = &http.Server{Handler: in.Handler(), ReadHeaderTimeout: 10 * time.Second}
		defer inspector.Close()
		log.Info("traffic inspector listening", zap.String("url", "http://"+ln.Addr().String()+"/"))
		go func() { _ = inspector.Serve(ln) }()
	}
	client, err := agentclient.New(clientCfg)
	if err != nil { // parseFlags checked what New checks; kept for safety
		fmt.Fprintf(stderr, "warren-agent: %v\n", err)
		return exitUsage
	}
	log.Info("starting", zap.String("version", version), zap.String("server", cfg.server), zap.Strings("tunnels", cfg.describeTunnels()))
	err = client.Run(ctx)
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		log.Info("stopping on a signal")
		return exitOK
	}
	fmt.Fprintln(stderr, "warren-agent:", err)
	return exitFailed
}

func printUsage(w io.Writer) {
	fs, _ := newFlagSet()
	fs.SetOutput(w)
	fmt.Fprint(w, usage)
	fs.PrintDefaults()
}

type config struct {
	server, authtoken, hostname, addr, proto, forwardsTo, metadata, region, logLevel string
	labels                                                                           labelsFlag
	showVersion                                                                      bool
	connections                                                                      int

	upstreamCA                                string
	upstreamInsecureSkipVerify, proxyProtocol bool

	inspect                                string
	inspectAllowRemote, inspectShowSecrets bool

	level   zap.AtomicLevel // derived by check
	tunnels []agentclient.TunnelConfig
}

// labelsFlag collects --label KEY=VALUE; one value may also hold several pairs separated
// by commas (as WARREN_AGENT_LABEL does).
type labelsFlag map[string]string

func (l *labelsFlag) String() string {
	if l == nil || len(*l) == 0 {
		return ""
	}
	pairs := make([]string, 0, len(*l))
	for k, v := range *l {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func (l *labelsFlag) Set(s string) error {
	if *l == nil {
		*l = labelsFlag{}
	}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || k == "" || v == "" || strings.Contains(v, "=") {
			return fmt.Errorf("%q is not KEY=VALUE", pair)
		}
		if old, dup := (*l)[k]; dup && old != v {
			return fmt.Errorf("label %q given twice", k)
		}
		(*l)[k] = v
	}
	return nil
}

// newFlagSet defines the flags into a config.
func newFlagSet() (fs *cliflags.Set, cfg *config) {
	cfg = &config{}
	fs = cliflags.New("warren-agent")
	str := fs.String
	str(&cfg.server, "server", "WARREN_AGENT_SERVER", "", "base URL of the Warren server, e.g. https://warren.example.com (required)")
	str(&cfg.authtoken, "authtoken", "WARREN_AGENT_AUTHTOKEN", "", "token of a tunnel credential (required; never logged); give it in the environment variable, since ps shows a command line to every user")
	str(&cfg.forwardsTo, "forwards-to", "WARREN_AGENT_FORWARDS_TO", "", "the local app the tunnels forward to: http://host:port, https://host:port, host:port or a port on localhost (required)")
	str(&cfg.hostname, "hostname", "WARREN_AGENT_HOSTNAME", "", "bind a tunnel on this reserved domain (proto http, https or tls)")
	str(&cfg.addr, "addr", "WARREN_AGENT_ADDR", "", "bind a tcp tunnel on this reserved address, host:port")
	fs.Value(&cfg.labels, "label", "WARREN_AGENT_LABEL", "KEY=VALUE label of a tunnel for tunnel-group backends; repeat it for several labels, or separate them with commas")
	str(&cfg.proto, "proto", "WARREN_AGENT_PROTO", "", "tunnel protocol: http, https, tcp or tls (default tcp with --addr, https otherwise)")
	str(&cfg.metadata, "metadata", "WARREN_AGENT_METADATA", "", "metadata of the tunnel session")
	str(&cfg.region, "region", "WARREN_AGENT_REGION", "", "region the agent announces")
	fs.Int(&cfg.connections, "connections", "WARREN_AGENT_CONNECTIONS", 1, fmt.Sprintf("sessions to keep at once, each on another server replica and binding the same tunnels (1 to %d): the first through --server, the others at the addresses the replicas advertise (--agent-advertise)", agentclient.MaxConnections))
	str(&cfg.upstreamCA, "upstream-ca", "WARREN_AGENT_UPSTREAM_CA", "", "PEM file of a private CA trusted, beside the system's, for an https:// --forwards-to")
	fs.Bool(&cfg.upstreamInsecureSkipVerify, "upstream-insecure-skip-verify", "WARREN_AGENT_UPSTREAM_INSECURE_SKIP_VERIFY", false, "accept any certificate from an https:// --forwards-to")
	fs.Bool(&cfg.proxyProtocol, "proxy-protocol", "WARREN_AGENT_PROXY_PROTOCOL", false, "send a PROXY protocol v2 header with the visitor's address first to the app of tcp and tls tunnels")
	str(&cfg.inspect, "inspect", "WARREN_AGENT_INSPECT", "", "serve the traffic inspector (the http and https tunnels' requests, live, with replay) on this address, e.g. 127.0.0.1:4040; off when empty")
	fs.Bool(&cfg.inspectAllowRemote, "inspect-allow-remote", "WARREN_AGENT_INSPECT_ALLOW_REMOTE", false, "let --inspect listen on an address other than loopback, and answer through any host name: whoever reaches it sees the traffic and can replay it")
	fs.Bool(&cfg.inspectShowSecrets, "inspect-show-secrets", "WARREN_AGENT_INSPECT_SHOW_SECRETS", false, "show Authorization, Proxy-Authorization, Cookie and Set-Cookie values in the inspector instead of masking them")
	str(&cfg.logLevel, "log-level", "WARREN_AGENT_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version and exit")
	return fs, cfg
}

// parseFlags reads the command line, then the environment for the flags it leaves out, and
// checks every value that can be checked without the server.
func parseFlags(args []string, env func(string) (string, bool), stderr io.Writer) (*config, error) {
	fs, cfg := newFlagSet()
	if err := fs.Read(args, env, stderr, &cfg.showVersion); err != nil {
		return nil, err
	}
	if cfg.showVersion {
		return cfg, nil
	}
	return cfg, cfg.check()
}

// check validates the configuration and derives the tunnels.
func (cfg *config) check() error {
	var err error
	if cfg.level, err = zaplog.ParseLevel(cfg.logLevel); err != nil {
		return err
	}
	switch {
	case cfg.server == "":
		return errors.New("--server is required")
	case cfg.authtoken == "":
		return errors.New("--authtoken is required")
	case cfg.forwardsTo == "":
		return errors.New("--forwards-to is required")
	case cfg.hostname == "" && cfg.addr == "" && len(cfg.labels) == 0:
		return errors.New("give --hostname, --addr or --label: the tunnel to bind")
	case cfg.hostname != "" && cfg.addr != "":
		return errors.New("give --hostname or --addr, not both")
	case cfg.proto != "" && !slices.Contains(agentclient.Protos, cfg.proto):
		return fmt.Errorf("--proto %q is not one of %s", cfg.proto, strings.Join(agentclient.Protos, ", "))
	case cfg.addr != "" && cfg.proto != "" && cfg.proto != "tcp":
		return fmt.Errorf("--addr binds a tcp tunnel, not --proto %s", cfg.proto)
	case cfg.hostname != "" && cfg.proto == "tcp":
		return errors.New("--proto tcp binds an --addr, not a --hostname")
	case cfg.upstreamCA != "" && cfg.upstreamInsecureSkipVerify:
		return errors.New("give --upstream-ca or --upstream-insecure-skip-verify, not both")
	case cfg.connections < 1 || cfg.connections > agentclient.MaxConnections:
		return fmt.Errorf("--connections %d is not between 1 and %d", cfg.connections, agentclient.MaxConnections)
	}
	if u, err := url.Parse(cfg.server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q is not an http:// or https:// URL", cfg.server)
	}
	if cfg.inspect != "" && !cfg.inspectAllowRemote && !loopbackAddr(cfg.inspect) {
		return fmt.Errorf("--inspect %q is not a loopback address (127.0.0.1:PORT, [::1]:PORT or localhost:PORT); add --inspect-allow-remote to serve it to other machines", cfg.inspect)
	}
	if cfg.addr != "" && !isHostPort(cfg.addr) {
		return fmt.Errorf("--addr %q is not host:port", cfg.addr)
	}
	proto := cfg.proto
	if proto == "" {
		proto = "https"
		if cfg.addr != "" {
			proto = "tcp"
		}
	}
	cfg.tunnels = nil
	if cfg.hostname != "" || cfg.addr != "" {
		cfg.tunnels = append(cfg.tunnels, agentclient.TunnelConfig{Proto: proto, Hostname: cfg.hostname, Addr: cfg.addr, ForwardsTo: cfg.forwardsTo})
	}
	if len(cfg.labels) > 0 {
		cfg.tunnels = append(cfg.tunnels, agentclient.TunnelConfig{Proto: proto, Labels: map[string]string(cfg.labels), ForwardsTo: cfg.forwardsTo})
	}
	// What remains (label syntax, the URL's shape, --forwards-to for the proto, the CA
	// file) is the client's to check.
	_, err = agentclient.New(cfg.client(zap.NewNop()))
	return err
}

func isHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != ""
}

// loopbackAddr: host:port whose host is a loopback IP or localhost.
func loopbackAddr(s string) bool {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// client is the agent's configuration.
func (cfg *config) client(log *zap.Logger) agentclient.Config {
	return agentclient.Config{
		ServerURL:    cfg.server,
		Authtoken:    cfg.authtoken,
		AgentVersion: version,
		Metadata:     cfg.metadata,
		Region:       cfg.region,
		Tunnels:      cfg.tunnels,
		Connections:  cfg.connections,
		Logger:       log,
		Forward: agentclient.ForwardOptions{
			UpstreamCAFile:             cfg.upstreamCA,
			UpstreamInsecureSkipVerify: cfg.upstreamInsecureSkipVerify,
			ProxyProtocol:              cfg.proxyProtocol,
		},
	}
}

// describeTunnels names the tunnels for the start line.
func (cfg *config) describeTunnels() []string {
	var out []string
	for _, t := range cfg.tunnels {
		what := t.Hostname + t.Addr
		if what == "" {
			l := labelsFlag(t.Labels)
			what = "labels " + l.String()
		}
		out = append(out, fmt.Sprintf("%s %s -> %s", t.Proto, what, t.ForwardsTo))
	}
	return out
}
