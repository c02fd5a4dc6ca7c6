// Package apiserver implements the Tunnel and Edge Management API as an http.Handler.
//
// The API is a set of families (API keys, credentials, …) that share one shape; each
// family's file declares what is particular to it and plugs into the generic handlers of
// family.go. Everything cross-cutting (authentication, the version header, operation ids,
// access logs, body checks) is middleware around one route table (routes.go).
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// Options configure a Server.
type Options struct {
	// Store persists every object. Required. The Server does not close it.
	Store store.Store
	// BaseURL prefixes every uri member, e.g. "http://127.0.0.1:8080". Required.
	BaseURL string
	// BootstrapAPIKey is the token of the admin API key created when the store is empty.
	// When empty, a token is generated; BootstrapToken returns it.
	BootstrapAPIKey string
	// AdminToken enables the operator endpoints under /_admin/ and authenticates them.
	AdminToken string
	// Logger receives access logs and errors. Defaults to a no-op logger.
	Logger *zap.Logger
	// MaxBodyBytes caps request bodies. Defaults to 1 MiB.
	MaxBodyBytes int64
	// Now returns the current time; tests may fix it. Defaults to time.Now.
	Now func() time.Time
	// RateLimit is the number of API requests an account may make per minute, all at once
	// or spread out. 0 means DefaultRateLimit; a negative value turns the limit off.
	// details.md §1's limit is 120.
	RateLimit int
	// MaxConcurrentRequests caps the API requests of one account in flight at once in this
	// process (429 ERR_225 beyond). 0 means DefaultMaxConcurrentRequests; a negative value
	// turns the cap off.
	MaxConcurrentRequests int
	// DomainBase is the service's own base domain. Defaults to DefaultDomainBase. It cannot
	// be reserved itself; reserved domains under it are service-owned (no CNAME target, no
	// certificates of the caller's). CNAME targets of the domains callers bring are under
	// "cname.<DomainBase>", ACME challenge targets under "acme-challenge.<DomainBase>".
	DomainBase string
	// AddrPool is where reserved TCP addresses come from. The host defaults to
	// "tcp.<DomainBase>"; without ports the range is DefaultAddrMinPort-DefaultAddrMaxPort.
	AddrPool AddrPool
	// TrustedProxies are the proxies whose X-Forwarded-For names the client's address, for
	// the api IP restriction. Without them the client is the connection's peer.
	TrustedProxies []netip.Prefix
	// Events configure the delivery of audit events to the accounts' event destinations.
	Events EventOptions
	// Agents configure the agent plane (GET /agent/connect).
	Agents AgentOptions
}

// AddrPool is the range of TCP addresses (host:port) the server assigns to reserved addresses.
type AddrPool struct {
	Host             string
	MinPort, MaxPort int // inclusive
}

// Defaults of Options.DomainBase and Options.AddrPool. ".localhost" names resolve to the
// loopback interface (RFC 6761), which suits a self-hosted server out of the box.
const (
	DefaultDomainBase  = "warren.localhost"
	DefaultAddrMinPort = 10000
	DefaultAddrMaxPort = 60000
)

// Server is the API as an http.Handler.
type Server struct {
	opts           Options
	log            *zap.Logger
	handler        http.Handler
	bootstrapToken string
	collections    map[string]collection        // by ID prefix, filled by routes
	children       map[*api.Family][]collection // nested families by parent, filled by routes
	patterns       []string                     // every route pattern, filled by routes
	limiter        *rateLimiter                 // nil without a rate limit
	concurrency    *concurrencyCap              // nil without a cap
	deliverer      *deliverer                   // nil when this process delivers no events
	agents         *agentHub                    // the agents connected to this process
	metrics        *metrics                     // served at GET /metrics
}

// New builds the API server and bootstraps an empty store with one account, its admin user
// and an admin API key. Unless Options.Events turns it off, it starts the event delivery
// worker, which runs until Close.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("apiserver: Options.Store is required")
	}
	if opts.BaseURL == "" {
		return nil, errors.New("apiserver: Options.BaseURL is required")
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := setDomainDefaults(&opts); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := checkBootstrapKey(opts.BootstrapAPIKey); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := opts.Events.check(); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := opts.Agents.check(); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	opts.Events.setDefaults()
	opts.Agents.setDefaults()
	m := newMetrics()
	if opts.RateLimit == 0 {
		opts.RateLimit = DefaultRateLimit
	}
	if opts.MaxConcurrentRequests == 0 {
		opts.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	s := &Server{opts: opts, log: opts.Logger, metrics: m}
	if opts.RateLimit > 0 {
		// Before the store is wrapped: the wrapper hides SharedBuckets.
		s.limiter = newAccountLimiter(opts.RateLimit)
		if shared, ok := opts.Store.(store.SharedBuckets); ok && shared.RateBuckets() != nil {
			s.limiter = newRateLimiter(opts.RateLimit, shared.RateBuckets(), rateLease(opts.RateLimit), opts.Logger)
		}
	}
	if opts.MaxConcurrentRequests > 0 {
		s.concurrency = newConcurrencyCap(opts.MaxConcurrentRequests)
	}
	// Every store call goes through the debug log and the metrics of its timings.
	opts.Store = loggedStore{Store: opts.Store, log: opts.Logger, metrics: m}
	s.opts.Store = opts.Store
	token, err := s.bootstrap(ctx)
	if err != nil {
		return nil, fmt.Errorf("apiserver: bootstrap: %w", err)
	}
	s.bootstrapToken = token
	s.handler = s.routes()
	if s.agents, err = newAgentHub(ctx, s); err != nil {
		return nil, fmt.Errorf("apiserver: agent replica lease: %w", err)
	}
	m.register(s)
	if opts.Events.Workers > 0 {
		s.startDelivery()
	}
	return s, nil
}

// CheckOptions reports the first option New would reject, Store and BaseURL aside, without
// touching a store: a binary checks its configuration before it opens (maybe creates) one.
func CheckOptions(opts Options) error {
	if err := setDomainDefaults(&opts); err != nil {
		return err
	}
	if err := opts.Events.check(); err != nil {
		return err
	}
	if err := opts.Agents.check(); err != nil {
		return err
	}
	return checkBootstrapKey(opts.BootstrapAPIKey)
}

// setDomainDefaults fills in and checks DomainBase and AddrPool.
func setDomainDefaults(opts *Options) error {
	opts.DomainBase = rules.NormalizeDomain(opts.DomainBase)
	if opts.DomainBase == "" {
		opts.DomainBase = DefaultDomainBase
	}
	if err := rules.ReservedDomain(opts.DomainBase, ""); err != nil || strings.HasPrefix(opts.DomainBase, "*") {
		return fmt.Errorf("the domain base %q is not a fully qualified domain name", opts.DomainBase)
	}
	pool := &opts.AddrPool
	if pool.Host == "" {
		pool.Host = "tcp." + opts.DomainBase
	}
	if pool.MinPort == 0 && pool.MaxPort == 0 {
		pool.MinPort, pool.MaxPort = DefaultAddrMinPort, DefaultAddrMaxPort
	}
	if pool.MinPort < 1 || pool.MaxPort > 65535 || pool.MinPort > pool.MaxPort {
		return fmt.Errorf("the reserved TCP address ports %d-%d are not a range within 1-65535", pool.MinPort, pool.MaxPort)
	}
	return nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// BootstrapToken returns the admin API key token generated when this Server bootstrapped
// an empty store without Options.BootstrapAPIKey, and "" otherwise. Show it once.
func (s *Server) BootstrapToken() string { return s.bootstrapToken }
