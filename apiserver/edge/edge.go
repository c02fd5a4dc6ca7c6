// Package edge is the traffic plane: it serves visitors on the edge's listeners (HTTPS with
// SNI, plain HTTP, TCP on reserved addresses) through the edges, routes, modules and
// backends the accounts configured, and through the agent endpoints of connected agents.
//
// The configuration is compiled into an immutable Snapshot (snapshot.go), swapped
// atomically. It is rebuilt when the store's routing revision moves (store.Routing: a poll,
// for changes made by other replicas) and at once when this process commits a routing
// change (the store's OnCommit hook marks the snapshot stale and wakes the poller; a
// connection that arrives first rebuilds it, one build at a time). Tunnels, sessions and endpoints are not in it: the edge asks the
// agent plane for them, live, through Tunnels.
//
// The edge imports neither the API (apiserver) nor the agent plane: Tunnels is the one
// thing it needs from the latter, and the binary hands it one.
package edge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewjam/saml/samlsp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/traffic"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/netguard"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// Tunnels is how the edge reaches agents; the agent plane implements it.
type Tunnels interface {
	// OpenStream opens a visitor stream to a tunnel (over the cluster link for a Remote one), h written first
	// (the agent strips it): the returned connection carries the visitor's bytes only. It
	// fails, as a dial does, when the agent could not reach its app: the edge tries the next
	// upstream.
	OpenStream(ctx context.Context, tunnelID string, h agentproto.StreamHeader) (net.Conn, error)
	// Matching lists the online tunnels in account whose labels include every one of
	// labels (a tunnel-group backend): this replica's, and other replicas' (Remote) when
	// the replicas are linked.
	Matching(accountID string, labels map[string]string) []Tunnel
	// Endpoint finds the tunnel bound to the agent endpoint proto ("http", "https", "tls",
	// "tcp") at hostport ("app.example.com:443", "app.example.com:80" for http,
	// "tcp.example.com:20001" for tcp).
	Endpoint(proto, hostport string) (Tunnel, bool)
}

// Tunnel is an online tunnel as the edge needs it.
type Tunnel struct {
	ID, AccountID, SessionID, Proto, ForwardsTo string
	Labels                                      map[string]string
	// Remote: another replica holds the tunnel (its streams cross the cluster link).
	Remote bool
}

// Options configure an Edge. Zero durations and sizes take the defaults below.
type Options struct {
	// Store is what the snapshot is compiled from; it must implement store.Routing.
	Store   store.Store
	Tunnels Tunnels
	Log     *zap.Logger
	// Registerer takes the edge's metrics; nil registers none.
	Registerer prometheus.Registerer
	// PollInterval is how often the routing revision is read, for changes made by other
	// processes (default 500 ms).
	PollInterval time.Duration
	// DialTimeout bounds opening a stream to a tunnel or dialing a static backend (10 s).
	DialTimeout time.Duration
	// HandshakeTimeout bounds a visitor's TLS ClientHello and handshake (10 s).
	HandshakeTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (10 s); IdleTimeout a kept-alive
	// connection between requests, and a TCP or TLS stream with no byte either way (120 s).
	ReadHeaderTimeout, IdleTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an upstream's response headers (60 s).
	ResponseHeaderTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (64 KiB) and an upstream's response headers.
	MaxHeaderBytes int
	// MaxRequestBody bounds a request's body; 0 for no bound (the default: a tunnel carries
	// uploads of any size).
	MaxRequestBody int64
	// AllowPrivate are the non-public destinations static backends may dial (all refused
	// by default: a static backend is never a way into the server's own network).
	AllowPrivate []netip.Prefix
	// StaticRootCAs verify static backends reached over TLS; nil for the system's.
	StaticRootCAs *x509.CertPool
	// Now is the clock of the traffic policies' rate limits and of the sign-in sessions
	// (time.Now); tests move it.
	Now func() time.Time
	// SNSCerts fetches the signing certificates of the webhook_verification module's sns
	// provider; nil for SNS's own hosts (sns.<region>.amazonaws.com) over HTTPS.
	SNSCerts *webhook.SNSCerts
	// MaxMetricSeries caps the edge/route label pairs of the metrics (10000); traffic of
	// pairs beyond it is counted under edge="other".
	MaxMetricSeries int
	// OAuth configures the oauth module's providers by name ("github", "google" …): their
	// endpoints elsewhere (tests, GitHub Enterprise) and the service-managed app that
	// modules without a client_id sign in with. A provider left out keeps its public
	// endpoints and has no managed app (such modules are refused, ERR_8043).
	OAuth map[string]OAuthProvider
	// AuthRootCAs verify the identity providers the oauth and oidc modules call; nil for
	// the system's.
	AuthRootCAs *x509.CertPool
	// AuthTimeout bounds each call to an identity provider: a token exchange, a user API
	// call, an OIDC discovery (10 s).
	AuthTimeout time.Duration
	// Traffic counts the edges' and routes' traffic over time (GET <edge>/{id}/traffic);
	// nil counts none.
	Traffic *traffic.Recorder
	// Managed serves the managed certificates of reserved domains that have no uploaded
	// one, and the ACME challenges that obtain them; nil for none.
	Managed ManagedCertificates
}

func (o *Options) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PollInterval, 500*time.Millisecond)
	def(&o.DialTimeout, 10*time.Second)
	def(&o.HandshakeTimeout, 10*time.Second)
	def(&o.ReadHeaderTimeout, 10*time.Second)
	def(&o.IdleTimeout, 120*time.Second)
	def(&o.ResponseHeaderTimeout, 60*time.Second)
	def(&o.AuthTimeout, 10*time.Second)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.MaxMetricSeries <= 0 {
		o.MaxMetricSeries = 10000
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Edge serves traffic. New builds it; Run keeps its snapshot current; Serve* serve listeners.
type Edge struct {
	opts     Options
	sessions *session.Codec // the authentication modules' cookies
	routing  store.Routing
	log      *zap.Logger
	metrics  *metrics
	policy   policyRuntime

	// authClient calls identity providers (Options.AuthRootCAs, AuthTimeout); discovery
	// caches the OIDC issuers' documents.
	authClient *http.Client
	discovery  discoveries

	// samlReplay refuses a SAML assertion, or a login handed to a route's host, a second
	// time (this replica's memory: an assertion is short-lived, and any replica takes it).
	samlReplay  *samlsp.MemoryReplayCache
	samlLogouts samlLogouts // the IdP's single logouts this replica heard of

	snap atomic.Pointer[Snapshot]
	// changes counts the local routing commits and the moves of the revision seen by the
	// poller; built is the count the snapshot in force was built after. A connection that
	// sees them differ rebuilds (or waits for the build under way, then checks again).
	changes, built atomic.Int64
	// failedAt is when a build last failed (Unix ns): connections then serve the previous
	// snapshot for a PollInterval rather than each wait on a store that is down.
	failedAt  atomic.Int64
	rebuildMu sync.Mutex
	poke      chan struct{}

	dialer    *net.Dialer
	transport *http.Transport
	rp        *httputil.ReverseProxy
	https     *http.Server  // serves the terminated connections of the HTTPS listener
	httpsConn *connListener // feeds it
	plain     *http.Server  // the HTTP listener's server

	mu       sync.Mutex
	closed   bool
	tcpHost  string
	tcp      map[int]net.Listener // port -> listener on tcpHost
	conns    sync.WaitGroup
	closeCtx context.Context
	cancel   context.CancelFunc

	sns webhook.Verifier // the webhook_verification module's sns provider, its certificate cache kept across snapshots
}

// New compiles the first snapshot and returns the edge; no listener is served until a
// Serve call, and the snapshot is polled only while Run runs.
func New(ctx context.Context, opts Options) (*Edge, error) {
	opts.setDefaults()
	routing, ok := opts.Store.(store.Routing)
	if !ok {
		return nil, fmt.Errorf("edge: the store %T has no routing revision", opts.Store)
	}
	if opts.Tunnels == nil {
		return nil, errors.New("edge: no Tunnels")
	}
	e := &Edge{opts: opts, routing: routing, log: opts.Log, poke: make(chan struct{}, 1), tcp: map[int]net.Listener{},
		policy:     policyRuntime{limits: trafficpolicy.NewLimits(), now: opts.Now},
		samlReplay: samlsp.NewMemoryReplayCache(samlReplayEntries)}
	var err error
	if e.sessions, err = session.CodecFor(opts.Store); err != nil {
		return nil, err
	}
	if e.sns, err = webhook.New(rules.SecretlessWebhookProvider, "", webhook.Options{SNS: opts.SNSCerts}); err != nil {
		return nil, err
	}
	e.closeCtx, e.cancel = context.WithCancel(context.Background())
	authTransport := http.DefaultTransport.(*http.Transport).Clone()
	authTransport.TLSClientConfig = &tls.Config{RootCAs: opts.AuthRootCAs}
	e.authClient = &http.Client{Transport: authTransport, Timeout: opts.AuthTimeout}
	e.metrics = newMetrics(opts.Registerer, opts.MaxMetricSeries)
	e.dialer = &net.Dialer{Timeout: opts.DialTimeout, Control: netguard.Guard{Allow: opts.AllowPrivate}.Control}
	e.transport = e.newTransport()
	e.rp = e.reverseProxy()
	e.httpsConn = newConnListener()
	e.https = e.server("https")
	e.plain = e.server("http")
	routing.OnCommit(func(written []string) {
		if slices.ContainsFunc(written, func(k string) bool { return kinds.Routing[k] }) {
			e.changes.Add(1)
			select {
			case e.poke <- struct{}{}:
			default:
			}
		}
	})
	e.changes.Add(1)
	if err := e.rebuild(ctx); err != nil {
		return nil, err
	}
	go func() { _ = e.https.Serve(e.httpsConn) }()
	return e, nil
}

func (e *Edge) server(scheme string) *http.Server {
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if scheme == "http" && e.opts.Managed != nil && e.opts.Managed.HandleHTTPChallenge(w, r) {
				return
			}
			e.serveHTTP(w, r, scheme)
		}),
		ReadHeaderTimeout: e.opts.ReadHeaderTimeout,
		IdleTimeout:       e.opts.IdleTimeout,
		MaxHeaderBytes:    e.opts.MaxHeaderBytes,
		ErrorLog:          zap.NewStdLog(e.log.Named("edge." + scheme).WithOptions(zap.IncreaseLevel(zap.WarnLevel))),
	}
}

// Snapshot returns the snapshot in force, rebuilding it first when a local change made it
// stale.
func (e *Edge) Snapshot(ctx context.Context) *Snapshot {
	if e.changes.Load() != e.built.Load() && time.Since(time.Unix(0, e.failedAt.Load())) > e.opts.PollInterval {
		if err := e.rebuild(ctx); err != nil {
			e.log.Warn("edge: rebuilding the routing snapshot failed; the previous one serves", zap.Error(err))
		}
	}
	return e.snap.Load()
}

// rebuild compiles a new snapshot when the current one is stale; one build at a time, and
// those who waited for it use it.
func (e *Edge) rebuild(ctx context.Context) error {
	e.rebuildMu.Lock()
	defer e.rebuildMu.Unlock()
	// Read before the store: a change committed during the build moves changes again.
	want := e.changes.Load()
	if want == e.built.Load() {
		return nil
	}
	rev, err := e.routing.Revision(ctx)
	var objs *objects
	if err == nil {
		objs, err = load(ctx, e.opts.Store)
	}
	if err != nil {
		e.failedAt.Store(time.Now().UnixNano())
		return err
	}
	e.snap.Store(compile(rev, objs, e.log, e.snap.Load(), e.policy))
	e.built.Store(want)
	e.reconcileTCP()
	return nil
}

// Run polls the routing revision until ctx ends, rebuilding the snapshot when it moved or
// a local change poked it.
func (e *Edge) Run(ctx context.Context) {
	t := time.NewTicker(e.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.closeCtx.Done():
			return
		case <-e.poke:
		case <-t.C:
			rev, err := e.routing.Revision(ctx)
			if err != nil {
				e.log.Warn("edge: reading the routing revision failed", zap.Error(err))
				continue
			}
			if s := e.snap.Load(); s != nil && s.Revision == rev {
				continue
			}
			e.changes.Add(1)
		}
		if err := e.rebuild(ctx); err != nil {
			e.log.Warn("edge: rebuilding the routing snapshot failed; the previous one serves", zap.Error(err))
		}
	}
}

// endpointsAllowed applies the account's IP restriction of type endpoints to a visitor.
func (e *Edge) endpointsAllowed(s *Snapshot, accountID string, ip netip.Addr) bool {
	a := s.accounts[accountID]
	if a == nil || a.endpoints == nil {
		return true
	}
	return e.restrictionAllows(a.endpoints, accountID, ip, "endpoints")
}

func (e *Edge) restrictionAllows(r *restriction, accountID string, ip netip.Addr, typ string) bool {
	if r.ips.allowed(ip) {
		return true
	}
	if !r.enforced {
		e.log.Warn("an IP restriction is not enforced; it would block this connection",
			zap.String("account_id", accountID), zap.String("ip_restriction_id", r.id),
			zap.String("type", typ), zap.String("client_ip", ip.String()))
		return true
	}
	return false
}

// Close stops every listener the edge serves and ends the connections it holds.
func (e *Edge) Close() error {
	e.mu.Lock()
	e.closed = true
	for port, l := range e.tcp {
		l.Close()
		delete(e.tcp, port)
	}
	e.mu.Unlock()
	e.cancel()
	err := errors.Join(e.https.Close(), e.plain.Close())
	e.transport.CloseIdleConnections()
	e.conns.Wait()
	return err
}

// planner returns a planner for one visitor.
func (e *Edge) planner() *planner {
	return &planner{tunnels: e.opts.Tunnels, rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// clientAddr is the visitor's address from a connection's remote address.
func clientAddr(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}
