package edge_test

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
)

// oidcProvider is a real OIDC provider on loopback (mockoidc: discovery, JWKS, signed ID
// tokens, PKCE) with an HTML sign-in page in front of its authorization endpoint: the
// visitor types an e-mail address, the provider signs that user in.
type oidcProvider struct {
	*mockoidc.MockOIDC
	mu        sync.Mutex
	authorize []map[string]string // the authorization requests' nonce, scope, code_challenge_method
}

func newOIDCProvider(t *testing.T) *oidcProvider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &oidcProvider{MockOIDC: m}
	_ = m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != mockoidc.AuthorizationEndpoint {
				next.ServeHTTP(w, r)
				return
			}
			_ = r.ParseForm()
			if r.Method == http.MethodGet {
				p.mu.Lock()
				p.authorize = append(p.authorize, map[string]string{"nonce": r.Form.Get("nonce"), "scope": r.Form.Get("scope"), "code_challenge_method": r.Form.Get("code_challenge_method")})
				p.mu.Unlock()
				var hidden strings.Builder
				for k := range r.Form {
					fmt.Fprintf(&hidden, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(r.Form.Get(k)))
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, `<!doctype html><html><body><h1>Sign in to the OIDC provider</h1>
<form method="post" action="%s">%s<input id="email" name="email" type="email"><button id="submit" type="submit">Sign in</button></form></body></html>`,
					mockoidc.AuthorizationEndpoint, hidden.String())
				return
			}
			email := r.PostForm.Get("email")
			local, _, _ := strings.Cut(email, "@")
			user := &mockoidc.MockUser{Subject: "sub-" + local, Email: email, EmailVerified: true, PreferredUsername: local}
			switch {
			case strings.HasPrefix(local, "unverified"):
				m.QueueUser(unverifiedUser{user})
			case strings.HasPrefix(local, "replayed"):
				m.QueueUser(otherNonceUser{user})
			default:
				m.QueueUser(user)
			}
			next.ServeHTTP(w, r)
		})
	})
	l := listen(t)
	if err := m.Start(l, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// unverifiedUser is a user whose ID token says "email_verified": false (mockoidc's own
// users leave the claim out when false).
type unverifiedUser struct{ *mockoidc.MockUser }

func (u unverifiedUser) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	return &struct {
		*mockoidc.IDTokenClaims
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}{base, u.Email, false}, nil
}

// otherNonceUser gets an ID token whose nonce is not the one of the login (a token replayed
// from another sign-in).
type otherNonceUser struct{ *mockoidc.MockUser }

func (u otherNonceUser) Claims(scope []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	other := *base
	other.Nonce = "nonce-of-another-login"
	return u.MockUser.Claims(scope, &other)
}

// module is an oidc module signing in at p.
func (p *oidcProvider) module(extra map[string]any) map[string]any {
	m := map[string]any{"issuer": p.Issuer(), "client_id": p.ClientID, "client_secret": p.ClientSecret}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

const oidcMarker = "Sign in to the OIDC provider"

// TestOIDCLogin: discovery from the issuer, the sign-in with nonce and PKCE, the ID token
// verified; the upstream receives the claims as identity headers, and not an e-mail address
// the provider says is unverified; an ID token with another nonce fails the sign-in. An idle
// session goes back to the provider.
func TestOIDCLogin(t *testing.T) {
	p := newOIDCProvider(t)
	e := newEnv(t)
	e.labelled("http", map[string]string{"app": "who"}, "http://"+identityApp(t))
	backend := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "who"}})
	_, id := e.httpsEdge("oidc.example.test", backend, map[string]any{"oidc": p.module(map[string]any{"scopes": []string{"email", "profile"}, "inactivity_timeout": 300})})

	c := e.loginClient()
	status, body := signInVia(t, c, "https://oidc.example.test/docs?page=2", oidcMarker, "alice@example.com")
	if want := "GET /docs?page=2 provider=oidc email=alice@example.com id=sub-alice name=alice forged= cookie=<"; status != 200 || !strings.Contains(strings.ReplaceAll(body, "</p>", "<"), want) {
		t.Fatalf("after the sign-in: %d %q, want %q", status, body, want)
	}
	req := p.authorize[0]
	if req["nonce"] == "" || req["code_challenge_method"] != "S256" || req["scope"] != "openid email profile" {
		t.Fatalf("the authorization request: %v", req)
	}
	status, body, _ = e.get(c, "https://oidc.example.test/again", "Warren-Auth-User-Id", "root")
	if status != 200 || !strings.Contains(body, "email=alice@example.com id=sub-alice ") {
		t.Fatalf("signed in: %d %q", status, body)
	}

	status, body = signInVia(t, e.loginClient(), "https://oidc.example.test/", oidcMarker, "unverified@example.com")
	if status != 200 || !strings.Contains(body, "provider=oidc email= id=sub-unverified ") {
		t.Fatalf("an unverified e-mail address: %d %q", status, body)
	}

	status, body = signInVia(t, e.loginClient(), "https://oidc.example.test/", oidcMarker, "replayed@example.com")
	if status != http.StatusBadRequest || !strings.Contains(body, "ERR_8041") {
		t.Fatalf("an ID token with another login's nonce: %d %q", status, body)
	}

	e.reseal(c, "oidc.example.test", session.CookieName(""), id, func(s *session.Session) { s.Seen = time.Now().Add(-6 * time.Minute) })
	resp, err := noFollow(c).Get("https://oidc.example.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, p.AuthorizationEndpoint()+"?") {
		t.Fatalf("an idle session: %d to %q", resp.StatusCode, loc)
	}
}

// TestOIDCProviderDown: an issuer that cannot be reached gets a 502 page at once, not a
// hang; a wrong client secret fails the login with 400.
func TestOIDCProviderDown(t *testing.T) {
	p := newOIDCProvider(t)
	e := newEnv(t, func(o *edge.Options) { o.AuthTimeout = 2 * time.Second })
	b := e.create("/backends/http_response", map[string]any{"status_code": 200, "body": "ok"})
	e.httpsEdge("down.example.test", b, map[string]any{"oidc": map[string]any{"issuer": "http://" + closedAddr(t) + "/oidc", "client_id": "c", "client_secret": "s"}})
	e.expectPage(e.client(), "https://down.example.test/", http.StatusBadGateway, "ERR_8042")

	e.httpsEdge("badsecret.example.test", b, map[string]any{"oidc": p.module(map[string]any{"client_secret": "wrong"})})
	status, body := signInVia(t, e.loginClient(), "https://badsecret.example.test/", oidcMarker, "alice@example.com")
	if status != http.StatusBadRequest || !strings.Contains(body, "ERR_8041") {
		t.Fatalf("a wrong client secret: %d %q", status, body)
	}
}

// TestOIDCAllowRules: email_addresses and email_domains admit as they do for OAuth (any
// one rule, case aside); an identity in neither list is refused with 403, and so is an
// address the provider says is unverified, even in an allowed domain.
func TestOIDCAllowRules(t *testing.T) {
	p := newOIDCProvider(t)
	e := newEnv(t)
	e.labelled("http", map[string]string{"app": "who"}, "http://"+identityApp(t))
	backend := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "who"}})
	e.httpsEdge("rules.oidc.example.test", backend, map[string]any{"oidc": p.module(map[string]any{
		"email_addresses": []string{"alice@example.com"}, "email_domains": []string{"corp.example"}})})
	for _, tc := range []struct {
		email string
		ok    bool
	}{
		{"alice@example.com", true},
		{"bob@corp.example", true},
		{"Carol@Corp.Example", true},
		{"mallory@evil.example", false},
		{"alice@example.com.evil.example", false},
		{"unverified@corp.example", false},
	} {
		status, body := signInVia(t, e.loginClient(), "https://rules.oidc.example.test/", oidcMarker, tc.email)
		switch {
		case tc.ok && (status != 200 || !strings.Contains(body, "provider=oidc email="+tc.email+" ")):
			t.Fatalf("%s: %d %q, want admitted", tc.email, status, body)
		case !tc.ok && (status != http.StatusForbidden || !strings.Contains(body, "ERR_8040")):
			t.Fatalf("%s: %d %q, want 403 ERR_8040", tc.email, status, body)
		}
	}
}
