// Package apiservertest starts a real Warren API server in-process on a temporary
// database, for handler and acceptance tests.
package apiservertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Server is a running test server.
type Server struct {
	URL        string // base URL of the API
	APIKey     string // token of the bootstrap admin API key
	AdminToken string // token of the /_admin/ endpoints
	AccountID  string // the bootstrap account
	// Store is the server's store, for tests that must set up state no endpoint creates yet.
	// Its secrets are sealed with a key of this server's own, as in production.
	Store store.Store
	// SecretKey is that key, base64 as --secret-key takes it (tests check it never leaks).
	SecretKey string
	// Plane is the server's agent plane: tests open streams to tunnels through it, as the
	// edge does.
	Plane *agentplane.Plane

	api        *apiserver.Server
	remoteAddr atomic.Pointer[string]
}

// SetRemoteAddr makes every following request reach the server as if from addr
// ("203.0.113.7:4000", "[2001:db8::1]:4000"), for tests of IP restrictions; "" restores
// the real peer (the loopback address).
func (s *Server) SetRemoteAddr(addr string) { s.remoteAddr.Store(&addr) }

// Start runs a fresh server on a temporary SQLite database until the test ends, with the
// server's defaults (the default rate limit included). configure may change the options
// before the server is built (e.g. a small address pool, or NoRateLimit).
func Start(t testing.TB, configure ...func(*apiserver.Options)) *Server {
	t.Helper()
	return StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return sqlite.Open(ctx, filepath.Join(t.TempDir(), "warren.db"), seal)
	}, configure...)
}

// Opener opens a new empty store whose secrets seal seals, e.g. a PostgreSQL database.
type Opener func(ctx context.Context, seal sqlstore.Option) (store.Store, error)

// StartOn is Start on the store that open opens.
func StartOn(t testing.TB, open Opener, configure ...func(*apiserver.Options)) *Server {
	t.Helper()
	ctx := context.Background()
	secretKey := sealing.GenerateKey()
	keys, err := sealing.NewKeyring(secretKey)
	if err != nil {
		t.Fatal(err)
	}
	db, err := open(ctx, sqlstore.WithKeys(keys))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	s := &Server{APIKey: ids.NewToken(ids.New(ids.APIKey)), AdminToken: "admin-" + ids.New(""), Store: db, SecretKey: sealing.EncodeKey(secretKey)}
	var handler http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if addr := s.remoteAddr.Load(); addr != nil && *addr != "" {
			r.RemoteAddr = *addr
		}
		handler.ServeHTTP(w, r)
	}))
	opts := apiserver.Options{Store: db, BaseURL: ts.URL, BootstrapAPIKey: s.APIKey, AdminToken: s.AdminToken}
	for _, f := range configure {
		f(&opts)
	}
	srv, err := apiserver.New(ctx, opts)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	handler = srv
	s.Plane = srv.AgentPlane()
	s.api = srv
	err = db.Read(ctx, func(tx store.Tx) error {
		account, err := tx.Lookup(ctx, apiserver.BootstrapAccountKey)
		if err == nil {
			s.AccountID = account.ID
		}
		return err
	})
	if err != nil {
		t.Fatalf("find the bootstrap account: %v", err)
	}
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
		_ = db.Close()
	})
	s.URL = ts.URL
	return s
}

// NoRateLimit turns the rate limit and the cap on simultaneous requests off, and the agent
// session limits, for benchmarks that send more requests or connect more agents than any
// real configuration.
func NoRateLimit(o *apiserver.Options) {
	o.RateLimit, o.MaxConcurrentRequests = -1, -1
	a := &o.Agents
	a.CredentialSessionRate, a.AccountSessionRate, a.CredentialSessions, a.AccountSessions = -1, -1, -1, -1
}

// NewUser adds a user with role (api.RoleAdmin or api.RoleMember) to the bootstrap account
// and returns the user's ID and an API key token that acts as the user.
func (s *Server) NewUser(t testing.TB, role string) (userID, apiKey string) {
	t.Helper()
	var grant api.AdminGrant
	s.admin(t, "/_admin/accounts/"+s.AccountID+"/users", api.AdminUserCreate{Email: ids.New("u") + "@example.com", Role: role}, &grant)
	return grant.User.ID, *grant.APIKey.Token
}

// NewAccount creates a separate account and returns the token of its admin's API key.
func (s *Server) NewAccount(t testing.TB) (apiKey string) {
	t.Helper()
	var grant api.AdminGrant
	s.admin(t, "/_admin/accounts", api.AdminAccountCreate{Name: ids.New("acct")}, &grant)
	return *grant.APIKey.Token
}

func (s *Server) admin(t testing.TB, path string, in, out any) {
	t.Helper()
	body, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	s.do(t, req, out)
}

func (s *Server) do(t testing.TB, req *http.Request, out any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e api.Error
		_ = json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("%s %s: %d %s %s", req.Method, req.URL.Path, resp.StatusCode, e.ErrorCode, e.Msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s %s: decode: %v", req.Method, req.URL.Path, err)
	}
}

// Keys is the keyring of the server's secret key, with which another replica's store opens
// the same database.
func (s *Server) Keys(t testing.TB) *sealing.Keyring {
	t.Helper()
	key, err := sealing.ParseKey(s.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sealing.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
