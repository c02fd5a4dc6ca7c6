// Command warren-apiserver serves the Tunnel and Edge Management API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `warren-apiserver serves the Tunnel and Edge Management API.

Usage:
  warren-apiserver [flags]      run the server
  warren-apiserver token        print a fresh token for --bootstrap-api-key
  warren-apiserver version      print the version

Every flag can also be set with the environment variable shown in brackets; a flag given on
the command line wins over the environment.

Flags:
`

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "token":
			// Any token of the right shape works; its first part becomes the key's ID.
			fmt.Println(ids.NewToken(ids.New(ids.APIKey)))
			return
		case "version":
			fmt.Println(version)
			return
		}
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "warren-apiserver:", err)
		os.Exit(1)
	}
}

type config struct {
	listen, database, baseURL, bootstrapAPIKey, adminToken, logLevel string
	rateLimit                                                        int
	domainBase, tcpAddrHost, tcpAddrPorts                            string
	trustedProxies                                                   string
}

func parseFlags() config {
	var cfg config
	fs := flag.NewFlagSet("warren-apiserver", flag.ExitOnError)
	str := func(p *string, name, env, def, help string) {
		if v, ok := os.LookupEnv(env); ok {
			def = v
		}
		fs.StringVar(p, name, def, help+" ["+env+"]")
	}
	str(&cfg.listen, "listen", "WARREN_LISTEN", "127.0.0.1:8080", "address to listen on")
	str(&cfg.database, "database", "WARREN_DATABASE", "warren.db", "the embedded SQLite database file (created when missing), or a postgres:// URL to share one PostgreSQL database between replicas")
	str(&cfg.baseURL, "base-url", "WARREN_BASE_URL", "", "URL clients reach the server at, used in uri members (default http://<listen address>)")
	str(&cfg.bootstrapAPIKey, "bootstrap-api-key", "WARREN_BOOTSTRAP_API_KEY", "", "token of the admin API key created on an empty database (default: generate one and print it once)")
	str(&cfg.adminToken, "admin-token", "WARREN_ADMIN_TOKEN", "", "bearer token of the operator endpoints under /_admin/ (off when empty)")
	str(&cfg.logLevel, "log-level", "WARREN_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	rateLimit := 120
	if v, ok := os.LookupEnv("WARREN_RATE_LIMIT"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			rateLimit = n
		}
	}
	fs.IntVar(&cfg.rateLimit, "rate-limit", rateLimit, "API requests per minute per account, 0 for no limit [WARREN_RATE_LIMIT]")
	str(&cfg.domainBase, "domain-base", "WARREN_DOMAIN_BASE", apiserver.DefaultDomainBase, "the service's own base domain: reserved domains under it are service-owned; CNAME and ACME targets live under it")
	str(&cfg.tcpAddrHost, "tcp-addr-host", "WARREN_TCP_ADDR_HOST", "", "host of the reserved TCP addresses (default tcp.<domain base>)")
	str(&cfg.tcpAddrPorts, "tcp-addr-ports", "WARREN_TCP_ADDR_PORTS", fmt.Sprintf("%d-%d", apiserver.DefaultAddrMinPort, apiserver.DefaultAddrMaxPort), "port range of the reserved TCP addresses, MIN-MAX")
	str(&cfg.trustedProxies, "trusted-proxies", "WARREN_TRUSTED_PROXIES", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For gives the client address for API IP restrictions (none by default)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	return cfg
}

func run() error {
	cfg := parseFlags()
	level, err := zap.ParseAtomicLevel(cfg.logLevel)
	if err != nil {
		return err
	}
	logCfg := zap.NewProductionConfig()
	logCfg.Level = level
	log, err := logCfg.Build()
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	trustedProxies, err := apiserver.ParseTrustedProxies(cfg.trustedProxies)
	if err != nil {
		return err
	}

	db, where, err := openStore(ctx, cfg.database)
	if err != nil {
		return err
	}
	defer db.Close()

	minPort, maxPort, err := parsePortRange(cfg.tcpAddrPorts)
	if err != nil {
		return err
	}

	listener, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	if cfg.baseURL == "" {
		cfg.baseURL = "http://" + listener.Addr().String()
	}
	srv, err := apiserver.New(ctx, apiserver.Options{
		Store:           db,
		BaseURL:         cfg.baseURL,
		BootstrapAPIKey: cfg.bootstrapAPIKey,
		AdminToken:      cfg.adminToken,
		Logger:          log,
		RateLimit:       cfg.rateLimit,
		DomainBase:      cfg.domainBase,
		AddrPool:        apiserver.AddrPool{Host: cfg.tcpAddrHost, MinPort: minPort, MaxPort: maxPort},
		TrustedProxies:  trustedProxies,
	})
	if err != nil {
		return err
	}
	if token := srv.BootstrapToken(); token != "" {
		// Printed once, to the terminal only: the store keeps just its hash.
		fmt.Fprintf(os.Stderr, "\nBootstrap admin API key token (shown once, keep it):\n\n  %s\n\n", token)
	}

	httpServer := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- httpServer.Serve(listener) }()
	log.Info("listening", zap.String("address", listener.Addr().String()), zap.String("base_url", cfg.baseURL), zap.String("database", where), zap.String("version", version))

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

// parsePortRange reads "MIN-MAX" (or a single port); apiserver.New checks the bounds.
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

// openStore opens the store that --database names: a postgres:// (or postgresql://) URL, or
// else a SQLite file. It also returns how to name it in logs, without a password.
func openStore(ctx context.Context, database string) (store.Store, string, error) {
	if strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://") {
		u, err := url.Parse(database)
		if err != nil {
			return nil, "", fmt.Errorf("--database: %w", err)
		}
		db, err := postgres.Open(ctx, database)
		return db, u.Redacted(), err
	}
	db, err := sqlite.Open(ctx, database)
	return db, database, err
}
