package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/acme"
	"github.com/warrenhq/terraform-provider-warren/apiserver/acmedns"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/cliflags"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// edgeConfig is the traffic plane's part of the command line: without a listener flag the
// server serves the API only.
type edgeConfig struct {
	httpsListen, httpListen, tcpHost, allowPrivate string
	snsCertHost                                    string
	dialTimeout, handshakeTimeout, idleTimeout     time.Duration
	readHeaderTimeout, responseHeaderTimeout       time.Duration

	allow []netip.Prefix // derived by check

	// oauth are the --oauth-<provider>-* flags by provider name: endpoints and managed app.
	oauth map[string]*edge.OAuthProvider

	acme acmeConfig
}

func defineEdgeFlags(fs *cliflags.Set, e *edgeConfig) {
	fs.String(&e.httpsListen, "edge-https-listen", "WARREN_EDGE_HTTPS_LISTEN", "", "address of the edge's HTTPS listener: TLS with SNI for HTTPS edges, TLS edges and agent endpoints of proto https and tls (hostports name port 443; off when empty)")
	fs.String(&e.httpListen, "edge-http-listen", "WARREN_EDGE_HTTP_LISTEN", "", "address of the edge's plain HTTP listener, for agent endpoints of proto http (off when empty)")
	fs.String(&e.tcpHost, "edge-tcp-host", "WARREN_EDGE_TCP_HOST", "", "host on which the port of every reserved TCP address is opened, for TCP edges and tcp agent endpoints (off when empty)")
	fs.String(&e.allowPrivate, "edge-allow-private-backends", "WARREN_EDGE_ALLOW_PRIVATE_BACKENDS", "", "comma-separated CIDRs that static backends may dial although not public (loopback, private, link-local and the like are refused by default)")
	fs.String(&e.snsCertHost, "webhook-sns-cert-host", "WARREN_WEBHOOK_SNS_CERT_HOST", "", "the one host (host or host:port) the webhook_verification module's sns provider fetches signing certificates from, over HTTPS; empty for Amazon SNS's own, sns.<region>.amazonaws.com (for tests and private SNS endpoints)")
	fs.Duration(&e.dialTimeout, "edge-dial-timeout", "WARREN_EDGE_DIAL_TIMEOUT", 10*time.Second, "longest wait to open a stream to a tunnel or dial a static backend")
	fs.Duration(&e.handshakeTimeout, "edge-handshake-timeout", "WARREN_EDGE_HANDSHAKE_TIMEOUT", 10*time.Second, "longest time a visitor may take for its TLS ClientHello and handshake")
	fs.Duration(&e.readHeaderTimeout, "edge-read-header-timeout", "WARREN_EDGE_READ_HEADER_TIMEOUT", 10*time.Second, "longest time a visitor may take to send a request's headers")
	fs.Duration(&e.idleTimeout, "edge-idle-timeout", "WARREN_EDGE_IDLE_TIMEOUT", 120*time.Second, "longest wait between two requests of a kept-alive visitor connection, and longest a TCP or TLS stream may carry nothing either way")
	fs.Duration(&e.responseHeaderTimeout, "edge-response-header-timeout", "WARREN_EDGE_RESPONSE_HEADER_TIMEOUT", 60*time.Second, "longest wait for an upstream's response headers (then 504 ERR_8009)")
	defineACMEFlags(fs, &e.acme)
	e.oauth = map[string]*edge.OAuthProvider{}
	for _, name := range rules.OAuthProviders {
		p := &edge.OAuthProvider{}
		e.oauth[name] = p
		flag := func(v *string, what, help string) {
			fs.String(v, "oauth-"+name+"-"+what, "WARREN_OAUTH_"+strings.ToUpper(name)+"_"+strings.ToUpper(strings.ReplaceAll(what, "-", "_")), "", help)
		}
		flag(&p.ClientID, "client-id", "client ID of the service-managed "+name+" OAuth app, which oauth modules without a client_id sign in with (their routes are refused without it); register https://<each route host>"+session.CallbackPath+" as its callback URL")
		flag(&p.ClientSecret, "client-secret", "client secret of the service-managed "+name+" OAuth app")
		flag(&p.AuthURL, "auth-url", "the "+name+" OAuth authorization URL, instead of the public one (tests, self-hosted providers)")
		flag(&p.TokenURL, "token-url", "the "+name+" OAuth token URL, instead of the public one")
		flag(&p.APIURL, "api-url", "base URL of the "+name+" user API, instead of the public one (GitHub Enterprise: https://<host>/api/v3)")
	}
}

// oauthProviders are the OAuth providers the operator configured (edge.Options.OAuth).
func (e *edgeConfig) oauthProviders() map[string]edge.OAuthProvider {
	out := map[string]edge.OAuthProvider{}
	for name, p := range e.oauth {
		if *p != (edge.OAuthProvider{}) {
			out[name] = *p
		}
	}
	return out
}

// on reports whether any edge listener is configured.
func (e *edgeConfig) on() bool { return e.httpsListen != "" || e.httpListen != "" || e.tcpHost != "" }

func (e *edgeConfig) check() error {
	for name, addr := range map[string]string{"edge-https-listen": e.httpsListen, "edge-http-listen": e.httpListen} {
		if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
			return fmt.Errorf("--%s %q is not a host:port address: %v", name, addr, err)
		}
	}
	if strings.Contains(e.tcpHost, ":") && net.ParseIP(e.tcpHost) == nil {
		return fmt.Errorf("--edge-tcp-host %q is a host, without a port", e.tcpHost)
	}
	for name, d := range map[string]time.Duration{"edge-dial-timeout": e.dialTimeout, "edge-handshake-timeout": e.handshakeTimeout, "edge-idle-timeout": e.idleTimeout, "edge-read-header-timeout": e.readHeaderTimeout, "edge-response-header-timeout": e.responseHeaderTimeout} {
		if d <= 0 {
			return fmt.Errorf("--%s %s must be positive", name, d)
		}
	}
	for name, p := range e.oauth {
		if (p.ClientID == "") != (p.ClientSecret == "") {
			return fmt.Errorf("--oauth-%s-client-id and --oauth-%s-client-secret go together", name, name)
		}
		for what, u := range map[string]string{"auth-url": p.AuthURL, "token-url": p.TokenURL, "api-url": p.APIURL} {
			if pu, err := url.Parse(u); u != "" && (err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "") {
				return fmt.Errorf("--oauth-%s-%s %q is not an absolute http(s) URL", name, what, u)
			}
		}
	}
	if err := e.acme.check(); err != nil {
		return err
	}
	e.allow = nil
	for _, s := range strings.Split(e.allowPrivate, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return fmt.Errorf("--edge-allow-private-backends: %q is not a CIDR", s)
		}
		e.allow = append(e.allow, p.Masked())
	}
	return nil
}

// edgeListeners are the edge's listeners, opened before the store like the API's.
type edgeListeners struct{ https, http net.Listener }

func (e *edgeConfig) listen() (*edgeListeners, error) {
	l := &edgeListeners{}
	var err error
	if e.httpsListen != "" {
		if l.https, err = net.Listen("tcp", e.httpsListen); err != nil {
			return nil, fmt.Errorf("--edge-https-listen: %w", err)
		}
	}
	if e.httpListen != "" {
		if l.http, err = net.Listen("tcp", e.httpListen); err != nil {
			l.close()
			return nil, fmt.Errorf("--edge-http-listen: %w", err)
		}
	}
	return l, nil
}

func (l *edgeListeners) close() {
	if l.https != nil {
		l.https.Close()
	}
	if l.http != nil {
		l.http.Close()
	}
}

// startEdge serves the edge on its listeners until ctx ends; stop closes it.
func startEdge(ctx context.Context, cfg *edgeConfig, l *edgeListeners, db store.Store, srv *apiserver.Server, log *zap.Logger) (stop func(), err error) {
	// The managed certificates are served on the HTTPS listener: without it there are none.
	var managed *acme.Manager
	if l.https != nil {
		opts := acme.Options{Store: db, Directories: cfg.acme.directories, Roots: cfg.acme.roots,
			TLSAddr: l.https.Addr().String(), Log: log.Named("acme")}
		if l.http != nil {
			opts.HTTPAddr = l.http.Addr().String()
		}
		// Any replica's DNS server answers the records this one writes: they are in the store.
		if cfg.acme.dnsListen != "" {
			opts.ChallengeRecords = acmedns.NewRecords(db, srv.ACMEChallengeZone())
		}
		opts.Resolver = cfg.acme.dnsResolver
		managed = acme.NewManager(opts)
	}
	e, err := edge.New(ctx, edge.Options{
		Store: db, Tunnels: srv.EdgeTunnels(), Registerer: srv.MetricsRegisterer(), Traffic: srv.TrafficRecorder(), Log: log.Named("edge"),
		DialTimeout: cfg.dialTimeout, HandshakeTimeout: cfg.handshakeTimeout, IdleTimeout: cfg.idleTimeout,
		ReadHeaderTimeout: cfg.readHeaderTimeout, ResponseHeaderTimeout: cfg.responseHeaderTimeout, AllowPrivate: cfg.allow,
		SNSCerts: webhook.NewSNSCerts(cfg.snsCertHost, nil),
		OAuth:    cfg.oauthProviders(),
		Managed:  managedCertificates(managed),
	})
	if err != nil {
		return nil, err
	}
	srv.SetSAMLHandler(e.SAMLHandler())
	runCtx, cancel := context.WithCancel(ctx)
	go e.Run(runCtx)
	if managed != nil {
		go managed.Run(runCtx)
	}
	if l.https != nil {
		go func() { _ = e.ServeHTTPS(l.https) }()
		log.Info("edge listening", zap.String("https", l.https.Addr().String()))
	}
	if l.http != nil {
		go func() { _ = e.ServePlainHTTP(l.http) }()
		log.Info("edge listening", zap.String("http", l.http.Addr().String()))
	}
	if cfg.tcpHost != "" {
		e.ServeTCP(cfg.tcpHost)
		log.Info("edge listening", zap.String("tcp_host", cfg.tcpHost))
	}
	return func() {
		cancel()
		l.close()
		_ = e.Close()
	}, nil
}

// managedCertificates is m as the edge takes it: a nil interface, not a nil *Manager.
func managedCertificates(m *acme.Manager) edge.ManagedCertificates {
	if m == nil {
		return nil
	}
	return m
}
