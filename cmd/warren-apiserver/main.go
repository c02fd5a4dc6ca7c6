// Command warren-apiserver serves the Tunnel and Edge Management API.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/acmedns"
	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/events"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/cliflags"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `warren-apiserver serves the Tunnel and Edge Management API.

Usage:
  warren-apiserver [flags]      run the server
  warren-apiserver token        print a fresh token for --bootstrap-api-key
  warren-apiserver secret-key   print a fresh key for --secret-key
  warren-apiserver rotate-secrets [flags]
                                seal every secret in the database with the current secret key
                                (the last step of a key rotation), then exit
  warren-apiserver backup [flags] FILE
                                write a consistent copy of the live SQLite database (--database)
                                to the new file FILE, while the server runs
  warren-apiserver restore [flags] FILE
                                replace the SQLite database (--database) with the backup FILE;
                                the server must be stopped
  warren-apiserver version      print the version (also --version)
  warren-apiserver help         print this help (also --help, -h)

Every flag can also be set with the environment variable shown in brackets; a flag given on
the command line wins over the environment.

Flags:
`

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // the server could not start, or stopped on an error
	exitUsage  = 2 // the command line or the environment is wrong; nothing was touched
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command: it serves until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "token", "secret-key", "version", "help":
			if len(args) > 1 {
				return usageError(stderr, fmt.Sprintf("%s takes no arguments", args[0]))
			}
			switch args[0] {
			case "token":
				// Any token of the right shape works; its first part becomes the key's ID.
				fmt.Fprintln(stdout, ids.NewToken(ids.New(ids.APIKey)))
			case "secret-key":
				fmt.Fprintln(stdout, sealing.EncodeKey(sealing.GenerateKey()))
			case "version":
				fmt.Fprintln(stdout, version)
			default:
				printUsage(stdout)
			}
			return exitOK
		}
	}
	rotate := len(args) > 0 && args[0] == "rotate-secrets"
	if rotate {
		args = args[1:]
	}
	// backup and restore take the server's flags (--database) and, last, the backup's file.
	copyCmd, copyFile := "", ""
	if len(args) > 0 && (args[0] == "backup" || args[0] == "restore") {
		copyCmd = args[0]
		if len(args) < 2 || strings.HasPrefix(args[len(args)-1], "-") {
			return usageError(stderr, copyCmd+" needs the backup's file as its last argument")
		}
		copyFile, args = args[len(args)-1], args[1:len(args)-1]
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
		fmt.Fprintf(stderr, "warren-apiserver: %v\nRun 'warren-apiserver --help' for the flags.\n", err)
		return exitUsage
	case cfg.showVersion:
		fmt.Fprintln(stdout, version)
		return exitOK
	}
	if copyCmd != "" {
		run := backup
		if copyCmd == "restore" {
			run = restore
		}
		if err := run(ctx, cfg, copyFile, stdout); err != nil {
			fmt.Fprintln(stderr, "warren-apiserver:", err)
			if errors.Is(err, errDatabaseInUse) || errors.Is(err, errPostgresBackup) {
				return exitUsage
			}
			return exitFailed
		}
		return exitOK
	}
	if rotate {
		if err := rotateSecrets(ctx, cfg, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "warren-apiserver:", err)
			return exitFailed
		}
		return exitOK
	}
	if err := serve(ctx, cfg, stderr); err != nil {
		fmt.Fprintln(stderr, "warren-apiserver:", err)
		if errors.Is(err, errDatabaseInUse) {
			return exitUsage
		}
		return exitFailed
	}
	return exitOK
}

func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "warren-apiserver: %s\n\n", msg)
	printUsage(stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fs, _ := newFlagSet()
	fs.SetOutput(w)
	fmt.Fprint(w, usage)
	fs.PrintDefaults()
}

type config struct {
	listen, database, baseURL, bootstrapAPIKey, adminToken, logLevel string
	rateLimit, maxConcurrentRequests                                 int
	domainBase, tcpAddrHost, tcpAddrPorts, trustedProxies            string
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout        time.Duration
	showVersion, console                                             bool
	eventWorkers                                                     int
	eventGiveUpAfter, eventRetention, eventMaxBackoff, eventLease    time.Duration
	agentHeartbeat, agentCommandTimeout, agentReplicaLease           time.Duration
	clusterListen, clusterAdvertise                                  string
	agentAdvertise                                                   string
	agentSessionRate, agentAccountSessionRate                        int
	agentMaxSessions, agentAccountMaxSessions                        int
	eventEndpoints                                                   delivery.Endpoints
	tlsCert, tlsKey                                                  string
	secretKey, secretKeyFile                                         string
	previousSecretKeys, previousSecretKeysFile                       string
	edge                                                             edgeConfig

	// Derived by check.
	level            zap.AtomicLevel
	minPort, maxPort int
	proxies          []netip.Prefix
	cert             *certificate // nil without TLS
	secretKeys       [][]byte     // current first; nil: the key file beside a SQLite database
}

// newFlagSet defines the flags into a config.
func newFlagSet() (fs *cliflags.Set, cfg *config) {
	cfg = &config{}
	fs = cliflags.New("warren-apiserver")
	str, num, dur := fs.String, fs.Int, fs.Duration
	str(&cfg.listen, "listen", "WARREN_LISTEN", "127.0.0.1:8080", "address to listen on")
	str(&cfg.database, "database", "WARREN_DATABASE", "warren.db", "the embedded SQLite database file (created when missing), or a postgres:// URL to share one PostgreSQL database between replicas")
	str(&cfg.baseURL, "base-url", "WARREN_BASE_URL", "", "URL clients reach the server at, used in uri members (default http://<listen address>, https:// with TLS)")
	str(&cfg.tlsCert, "tls-cert", "WARREN_TLS_CERT", "", "PEM file of the certificate (with its chain) to serve HTTPS with, TLS 1.2 or later; needs --tls-key; reloaded on SIGHUP (default: plain HTTP)")
	str(&cfg.tlsKey, "tls-key", "WARREN_TLS_KEY", "", "PEM file of the private key of --tls-cert; reloaded with it on SIGHUP")
	str(&cfg.secretKey, "secret-key", "WARREN_SECRET_KEY", "", "base64 of the 32-byte AES-256-GCM key that encrypts private keys, token hashes and other secrets in the database ('warren-apiserver secret-key' makes one); required with PostgreSQL, the same on every replica (default with SQLite: the file <database>.key, generated when missing)")
	str(&cfg.secretKeyFile, "secret-key-file", "WARREN_SECRET_KEY_FILE", "", "file holding the --secret-key, instead of the flag")
	str(&cfg.previousSecretKeys, "previous-secret-keys", "WARREN_PREVIOUS_SECRET_KEYS", "", "comma-separated base64 keys that secrets may still be sealed with, during a key rotation (see rotate-secrets); they only decrypt")
	str(&cfg.previousSecretKeysFile, "previous-secret-keys-file", "WARREN_PREVIOUS_SECRET_KEYS_FILE", "", "file of previous secret keys, one per line, added to --previous-secret-keys")
	str(&cfg.bootstrapAPIKey, "bootstrap-api-key", "WARREN_BOOTSTRAP_API_KEY", "", "token of the admin API key created on an empty database (default: generate one and print it once); ignored, with a warning, once the database is bootstrapped")
	str(&cfg.adminToken, "admin-token", "WARREN_ADMIN_TOKEN", "", "bearer token of the operator endpoints under /_admin/ (off when empty)")
	str(&cfg.logLevel, "log-level", "WARREN_LOG_LEVEL", "info", "log level: debug (adds request starts and store timings), info, warn or error")
	num(&cfg.rateLimit, "rate-limit", "WARREN_RATE_LIMIT", apiserver.DefaultRateLimit, "API requests per minute per account, all at once or spread out (429 ERR_226 beyond); 0 for no limit; the spec's limit is 120; shared by the replicas of one PostgreSQL database")
	num(&cfg.maxConcurrentRequests, "max-concurrent-requests", "WARREN_MAX_CONCURRENT_REQUESTS", apiserver.DefaultMaxConcurrentRequests, "API requests one account may have in flight at once in this process (429 ERR_225 beyond); 0 for no cap")
	str(&cfg.domainBase, "domain-base", "WARREN_DOMAIN_BASE", apiserver.DefaultDomainBase, "the service's own base domain: reserved domains under it are service-owned; CNAME and ACME targets live under it")
	str(&cfg.tcpAddrHost, "tcp-addr-host", "WARREN_TCP_ADDR_HOST", "", "host of the reserved TCP addresses (default tcp.<domain base>)")
	str(&cfg.tcpAddrPorts, "tcp-addr-ports", "WARREN_TCP_ADDR_PORTS", fmt.Sprintf("%d-%d", apiserver.DefaultAddrMinPort, apiserver.DefaultAddrMaxPort), "port range of the reserved TCP addresses, MIN-MAX")
	dur(&cfg.readHeaderTimeout, "read-header-timeout", "WARREN_READ_HEADER_TIMEOUT", 10*time.Second, "longest time a client may take to send a request's headers, 0 for no limit")
	dur(&cfg.readTimeout, "read-timeout", "WARREN_READ_TIMEOUT", 60*time.Second, "longest time a client may take to send a whole request, body included, 0 for no limit")
	dur(&cfg.writeTimeout, "write-timeout", "WARREN_WRITE_TIMEOUT", 60*time.Second, "longest time from the end of a request's headers to the end of its response, 0 for no limit")
	dur(&cfg.idleTimeout, "idle-timeout", "WARREN_IDLE_TIMEOUT", 120*time.Second, "longest time a keep-alive connection may wait for its next request (0: the read timeout)")
	str(&cfg.trustedProxies, "trusted-proxies", "WARREN_TRUSTED_PROXIES", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For gives the client address for API IP restrictions (none by default)")
	num(&cfg.eventWorkers, "event-workers", "WARREN_EVENT_WORKERS", events.DefaultWorkers, "event destinations this process sends to at once; 0 delivers no events here (they wait for a replica that does)")
	dur(&cfg.eventGiveUpAfter, "event-give-up-after", "WARREN_EVENT_GIVE_UP_AFTER", events.DefaultGiveUpAfter, "age at which an event not yet delivered to a destination fails for good")
	dur(&cfg.eventMaxBackoff, "event-max-backoff", "WARREN_EVENT_MAX_BACKOFF", events.DefaultMaxBackoff, "longest wait between two attempts to deliver an event (the wait doubles from 1s)")
	dur(&cfg.eventRetention, "event-retention", "WARREN_EVENT_RETENTION", events.DefaultRetention, "how long delivered and failed events are kept (GET /_admin/events)")
	dur(&cfg.agentHeartbeat, "agent-heartbeat", "WARREN_AGENT_HEARTBEAT", agentplane.DefaultHeartbeat, "how often the server and each agent must hear from each other; an agent silent for three intervals is disconnected and its session deleted")
	dur(&cfg.agentCommandTimeout, "agent-command-timeout", "WARREN_AGENT_COMMAND_TIMEOUT", agentplane.DefaultCommandTimeout, "how long a tunnel-session command (restart, stop, update) waits for the agent's answer (then 504 ERR_810)")
	dur(&cfg.agentReplicaLease, "agent-replica-lease", "WARREN_AGENT_REPLICA_LEASE", 0, "how long this replica's liveness lease lasts (renewed every heartbeat, longer than it); once it runs out, other replicas end the sessions it held (0: three heartbeat intervals)")
	str(&cfg.clusterListen, "cluster-listen", "WARREN_CLUSTER_LISTEN", "", "address of the cluster link's listener, through which the other replicas of the database open streams to the tunnels of this replica's agents (off when empty; it needs the secret key, the same on every replica)")
	str(&cfg.agentAdvertise, "agent-advertise", "WARREN_AGENT_ADVERTISE", "", "base URL (http:// or https://) at which agents reach this replica directly, not through the load balancer: agents started with --connections N > 1 keep a session on each of N replicas that have one (none listed when empty)")
	str(&cfg.clusterAdvertise, "cluster-advertise", "WARREN_CLUSTER_ADVERTISE", "", "address (host:port) at which the other replicas reach this replica's --cluster-listen (default: that address, which must then name a host)")
	num(&cfg.agentSessionRate, "agent-session-rate", "WARREN_AGENT_SESSION_RATE", agentplane.DefaultCredentialSessionRate, "agent sessions one tunnel credential may start per minute, all at once or spread out (429 ERR_226 before the upgrade beyond); 0 for no limit; shared by the replicas of one PostgreSQL database")
	num(&cfg.agentAccountSessionRate, "agent-account-session-rate", "WARREN_AGENT_ACCOUNT_SESSION_RATE", agentplane.DefaultAccountSessionRate, "agent sessions the credentials of one account may start per minute together; 0 for no limit")
	num(&cfg.agentMaxSessions, "agent-max-sessions", "WARREN_AGENT_MAX_SESSIONS", agentplane.DefaultCredentialSessions, "agent sessions one tunnel credential may hold at once, on all replicas (429 ERR_225 beyond); 0 for no cap")
	num(&cfg.agentAccountMaxSessions, "agent-account-max-sessions", "WARREN_AGENT_ACCOUNT_MAX_SESSIONS", agentplane.DefaultAccountSessions, "agent sessions the credentials of one account may hold at once together; 0 for no cap")
	dur(&cfg.eventLease, "event-lease", "WARREN_EVENT_LEASE", events.DefaultLease, "how long a replica holds a destination's deliveries while it sends them (a send may take half of it); after a crash they wait this long")
	e := &cfg.eventEndpoints
	str(&e.Firehose, "event-endpoint-delivery-stream", "WARREN_EVENT_ENDPOINT_DELIVERY_STREAM", "", "URL of the delivery stream (Firehose) API, instead of the ARN's region's")
	str(&e.Kinesis, "event-endpoint-data-stream", "WARREN_EVENT_ENDPOINT_DATA_STREAM", "", "URL of the data stream (Kinesis) API, instead of the ARN's region's")
	str(&e.CloudWatchLogs, "event-endpoint-log-group", "WARREN_EVENT_ENDPOINT_LOG_GROUP", "", "URL of the log group (CloudWatch Logs) API, instead of the ARN's region's")
	str(&e.STS, "event-endpoint-sts", "WARREN_EVENT_ENDPOINT_STS", "", "URL of the STS API that role auth assumes roles with")
	str(&e.Observability, "event-endpoint-observability", "WARREN_EVENT_ENDPOINT_OBSERVABILITY", "", "base URL of the observability logs intake, instead of the target site's")
	str(&e.IdentityAuthority, "event-identity-authority", "WARREN_EVENT_IDENTITY_AUTHORITY", "", "identity authority host (https URL) of the cloud logs-ingestion target's client-credentials tokens, instead of the public cloud's")
	fs.Bool(&cfg.console, "console", "WARREN_CONSOLE", true, "serve the web console under /console/ (--console=false turns it off)")
	fs.BoolVar(&cfg.showVersion, "version", false, "print the version and exit")
	defineEdgeFlags(fs, &cfg.edge)
	return fs, cfg
}

// parseFlags reads the command line, then the environment for the flags it leaves out, and
// checks every value that can be checked without touching the network or a database.
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

// check validates the configuration and derives the parsed values.
func (cfg *config) check() error {
	var err error
	if cfg.level, err = zaplog.ParseLevel(cfg.logLevel); err != nil {
		return err
	}
	if cfg.rateLimit < 0 {
		return fmt.Errorf("--rate-limit %d is negative; 0 turns the limit off", cfg.rateLimit)
	}
	if cfg.maxConcurrentRequests < 0 {
		return fmt.Errorf("--max-concurrent-requests %d is negative; 0 turns the cap off", cfg.maxConcurrentRequests)
	}
	for name, d := range map[string]time.Duration{"read-header-timeout": cfg.readHeaderTimeout, "read-timeout": cfg.readTimeout, "write-timeout": cfg.writeTimeout, "idle-timeout": cfg.idleTimeout} {
		if d < 0 {
			return fmt.Errorf("--%s %s is negative; 0 means no limit", name, d)
		}
	}
	for name, n := range map[string]int{"agent-session-rate": cfg.agentSessionRate, "agent-account-session-rate": cfg.agentAccountSessionRate, "agent-max-sessions": cfg.agentMaxSessions, "agent-account-max-sessions": cfg.agentAccountMaxSessions} {
		if n < 0 {
			return fmt.Errorf("--%s %d is negative; 0 turns the limit off", name, n)
		}
	}
	if err := cfg.checkCluster(); err != nil {
		return err
	}
	if cfg.agentReplicaLease < 0 {
		return fmt.Errorf("--agent-replica-lease %s is negative; 0 means three heartbeat intervals", cfg.agentReplicaLease)
	}
	if cfg.eventWorkers < 0 {
		return fmt.Errorf("--event-workers %d is negative; 0 delivers no events in this process", cfg.eventWorkers)
	}
	for name, d := range map[string]time.Duration{"event-give-up-after": cfg.eventGiveUpAfter, "event-retention": cfg.eventRetention, "event-max-backoff": cfg.eventMaxBackoff, "event-lease": cfg.eventLease, "agent-heartbeat": cfg.agentHeartbeat, "agent-command-timeout": cfg.agentCommandTimeout} {
		if d <= 0 {
			return fmt.Errorf("--%s %s must be positive", name, d)
		}
	}
	e := cfg.eventEndpoints
	for name, v := range map[string]string{"event-endpoint-delivery-stream": e.Firehose, "event-endpoint-data-stream": e.Kinesis, "event-endpoint-log-group": e.CloudWatchLogs, "event-endpoint-sts": e.STS, "event-endpoint-observability": e.Observability, "event-identity-authority": e.IdentityAuthority} {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return fmt.Errorf("--%s %q is not an http:// or https:// URL", name, v)
		}
	}
	if _, _, err := net.SplitHostPort(cfg.listen); err != nil {
		return fmt.Errorf("--listen %q is not a host:port address: %v", cfg.listen, err)
	}
	if cfg.baseURL != "" {
		u, err := url.Parse(cfg.baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--base-url %q is not an http:// or https:// URL", cfg.baseURL)
		}
	}
	if cfg.database == "" {
		return errors.New("--database is empty")
	}
	if isPostgres(cfg.database) {
		if _, err := url.Parse(cfg.database); err != nil {
			return fmt.Errorf("--database is not a valid postgres:// URL") // the error would quote the password
		}
	}
	if cfg.minPort, cfg.maxPort, err = parsePortRange(cfg.tcpAddrPorts); err != nil {
		return err
	}
	if cfg.proxies, err = apiserver.ParseTrustedProxies(cfg.trustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if err := apiserver.CheckOptions(cfg.options()); err != nil {
		return err
	}
	if err := cfg.edge.check(); err != nil {
		return err
	}
	if err := cfg.checkSecretKeys(); err != nil {
		return err
	}
	return cfg.checkTLS() // last: it reads files
}

// options are the apiserver options the configuration sets.
func (cfg *config) options() apiserver.Options {
	return apiserver.Options{
		Version:               version,
		BaseURL:               cfg.baseURL,
		BootstrapAPIKey:       cfg.bootstrapAPIKey,
		AdminToken:            cfg.adminToken,
		RateLimit:             cmp.Or(cfg.rateLimit, -1), // the flag's 0 is "no limit", Options' 0 the default
		MaxConcurrentRequests: cmp.Or(cfg.maxConcurrentRequests, -1),
		DomainBase:            cfg.domainBase,
		AddrPool:              apiserver.AddrPool{Host: cfg.tcpAddrHost, MinPort: cfg.minPort, MaxPort: cfg.maxPort},
		TrustedProxies:        cfg.proxies,
		Console:               cfg.console,
		Events: events.Options{
			Workers:     cmp.Or(cfg.eventWorkers, -1), // the flag's 0 is "none here", Options' 0 the default
			GiveUpAfter: cfg.eventGiveUpAfter,
			MaxBackoff:  cfg.eventMaxBackoff,
			Retention:   cfg.eventRetention,
			Lease:       cfg.eventLease,
			Endpoints:   cfg.eventEndpoints,
		},
		Agents: agentplane.Options{
			Heartbeat: cfg.agentHeartbeat, CommandTimeout: cfg.agentCommandTimeout, ReplicaLease: cfg.agentReplicaLease,
			// The flags' 0 is "no limit", Options' 0 the default.
			CredentialSessionRate: cmp.Or(cfg.agentSessionRate, -1), AccountSessionRate: cmp.Or(cfg.agentAccountSessionRate, -1),
			CredentialSessions: cmp.Or(cfg.agentMaxSessions, -1), AccountSessions: cmp.Or(cfg.agentAccountMaxSessions, -1),
			Link: cfg.clusterLink(), Advertise: cfg.agentAdvertise,
		},
	}
}

// newHTTPServer applies the timeouts that keep a slow or idle client from holding a
// connection (and its goroutine) forever.
func newHTTPServer(cfg *config, h http.Handler, log *zap.Logger) *http.Server {
	// net/http reports failed TLS handshakes, accept errors and the like here.
	errorLog, _ := zap.NewStdLogAt(log, zap.WarnLevel)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       cfg.idleTimeout,
		ErrorLog:          errorLog,
	}
}

// serve starts the server and runs it until ctx ends. A start that fails leaves no
// database behind that it created.
func serve(ctx context.Context, cfg *config, stderr io.Writer) (err error) {
	log := zaplog.New(cfg.level, stderr)
	defer func() { _ = log.Sync() }()

	// Listen before opening the store: a port in use must not leave a new database behind.
	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			listener.Close()
		}
	}()
	edgeListeners, err := cfg.edge.listen()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			edgeListeners.close()
		}
	}()
	clusterListener, err := cfg.listenCluster()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && clusterListener != nil {
			clusterListener.Close()
		}
	}()
	dnsListeners, err := cfg.edge.acme.listenDNS()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			dnsListeners.close()
		}
	}()
	opts := cfg.options()
	if opts.BaseURL == "" {
		scheme := "http"
		if cfg.cert != nil {
			scheme = "https"
		}
		opts.BaseURL = scheme + "://" + listener.Addr().String()
	}
	if !isPostgres(cfg.database) {
		if err := sqlite.CheckPath(cfg.database); err != nil {
			return err
		}
		var release func(remove bool)
		if release, err = lockDatabase(cfg.database); err != nil {
			return err
		}
		defer func() { release(err != nil) }() // after the store closes: defers run last in, first out
	}
	db, where, discard, err := openStore(ctx, cfg.database, cfg.secretKeys, log)
	if err != nil {
		return err
	}
	opts.Store, opts.Logger = db, log
	srv, err := apiserver.New(ctx, opts)
	if err != nil {
		db.Close()
		discard()
		return err
	}
	defer db.Close()
	defer srv.Close() // before the store closes: the delivery worker ends first
	if token := srv.BootstrapToken(); token != "" {
		// Printed once, to the terminal only: the store keeps just its hash.
		fmt.Fprintf(stderr, "\nBootstrap admin API key token (shown once, keep it):\n\n  %s\n\n", token)
	}

	if clusterListener != nil {
		go func() { _ = srv.ServeCluster(clusterListener) }()
		defer clusterListener.Close() // before srv.Close, which ends the links it serves
		log.Info("cluster link listening", zap.String("address", clusterListener.Addr().String()), zap.String("advertised", opts.Agents.Link))
	}

	if dnsListeners != nil {
		dnsServer := acmedns.NewServer(acmedns.Options{Records: acmedns.NewRecords(db, srv.ACMEChallengeZone()),
			Nameservers: cfg.edge.acme.nameservers(), Log: log.Named("acme_dns")})
		dnsServer.Serve(dnsListeners.udp, dnsListeners.tcp)
		defer dnsServer.Shutdown() // before the store closes
		log.Info("DNS server listening", zap.String("address", dnsListeners.tcp.Addr().String()), zap.String("zone", srv.ACMEChallengeZone()))
	}

	if cfg.edge.on() {
		stopEdge, err := startEdge(ctx, &cfg.edge, edgeListeners, db, srv, log)
		if err != nil {
			return err
		}
		defer stopEdge() // before the store closes
	}

	httpServer := newHTTPServer(cfg, srv, log)
	errc := make(chan error, 1)
	if cfg.cert != nil {
		httpServer.TLSConfig = cfg.cert.tlsConfig()
		stopReloads := cfg.cert.reloadOnSIGHUP(log)
		defer stopReloads()
		logCertificate(log, "TLS certificate loaded", cfg.cert.current.Load(), time.Now())
		// No file names: each handshake takes the current pair from TLSConfig.GetCertificate.
		go func() { errc <- httpServer.ServeTLS(listener, "", "") }()
	} else {
		go func() { errc <- httpServer.Serve(listener) }()
	}
	log.Info("listening", zap.String("address", listener.Addr().String()), zap.String("base_url", opts.BaseURL), zap.Bool("tls", cfg.cert != nil), zap.String("database", where), zap.String("version", version))

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// parsePortRange reads "MIN-MAX" (or a single port); apiserver.CheckOptions checks the bounds.
func parsePortRange(s string) (minPort, maxPort int, err error) {
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	minPort, err1 := strconv.Atoi(strings.TrimSpace(lo))
	maxPort, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--tcp-addr-ports %q is not a port range such as 10000-60000", s)
	}
	return minPort, maxPort, nil
}

func isPostgres(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

// openStore opens the store that --database names: a postgres:// (or postgresql://) URL, or
// else a SQLite file, with its secrets sealed by keys (nil: the key file beside a SQLite
// database, see storeKeys). It also returns how to name it in logs, without a password, and
// discard, which removes (after Close) the SQLite files this call created, so a start that
// fails later leaves no empty database behind. A failed openStore has discarded already.
func openStore(ctx context.Context, database string, keys [][]byte, log *zap.Logger) (db store.Store, where string, discard func(), err error) {
	if isPostgres(database) {
		u, err := url.Parse(database)
		if err != nil {
			return nil, "", nil, errors.New("--database is not a valid postgres:// URL")
		}
		if keys == nil {
			return nil, "", nil, errors.New("a PostgreSQL --database needs --secret-key or --secret-key-file")
		}
		ring, _, err := storeKeys(database, keys, log)
		if err != nil {
			return nil, "", nil, err
		}
		db, err := postgres.Open(ctx, database, sqlstore.WithKeys(ring))
		return db, u.Redacted(), func() {}, err
	}
	var created []string
	for _, f := range sqlite.Files(database) {
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			created = append(created, f)
		}
	}
	if err := sqlite.CheckPath(database); err != nil {
		return nil, "", nil, err // no key file beside a database that cannot be created
	}
	ring, keyFile, err := storeKeys(database, keys, log)
	if err != nil {
		return nil, "", nil, err
	}
	// A key generated for a database that existed has sealed its check value by the time
	// anything fails: it stays. One generated with a new database goes with it.
	if keyFile != "" && len(created) > 0 && created[0] == database {
		created = append(created, keyFile)
	}
	discard = func() {
		for _, f := range created {
			_ = os.Remove(f)
		}
	}
	sdb, err := sqlite.Open(ctx, database, sqlstore.WithKeys(ring))
	if err != nil {
		discard()
		if keyFile != "" {
			// Nothing was sealed with it; the database's secrets need the key they were sealed with.
			_ = os.Remove(keyFile)
			err = fmt.Errorf("%w (no key file %s was found: restore it, or give the key with --secret-key)", err, keyFile)
		}
		return nil, "", nil, err
	}
	return sdb, database, discard, nil
}
