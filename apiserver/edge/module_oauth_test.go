package edge_test

import (
	"crypto/x509"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
)

// oauthEnv is an edge whose OAuth providers are fakes (their endpoints by the options the
// server flags fill), with an identity app behind a tunnel group.
type oauthEnv struct {
	*env
	idps    map[string]*fakeIdP
	backend string
	certs   []*x509.Certificate
}

var (
	alice   = fakeUser{id: "1001", email: "alice@example.com", name: "alice", verified: true}
	mallory = fakeUser{id: "1002", email: "mallory@evil.example", name: "mallory", verified: true}
	bob     = fakeUser{id: "1003", email: "bob@corp.example", name: "bob", verified: true}
)

// newOAuthEnv starts a fake for each provider; managed lists those whose fake app is the
// server's managed app.
func newOAuthEnv(t *testing.T, providers []string, managed ...string) *oauthEnv {
	o := &oauthEnv{idps: map[string]*fakeIdP{}}
	opts := map[string]edge.OAuthProvider{}
	pool := x509.NewCertPool()
	for _, p := range providers {
		f := newFakeIdP(t, p, alice, mallory, bob)
		o.idps[p] = f
		isManaged := false
		for _, m := range managed {
			isManaged = isManaged || m == p
		}
		opts[p] = f.options(isManaged)
		pool.AddCert(f.srv.Certificate())
		o.certs = append(o.certs, f.srv.Certificate())
	}
	o.env = newEnv(t, func(eo *edge.Options) { eo.OAuth, eo.AuthRootCAs = opts, pool })
	o.labelled("http", map[string]string{"app": "who"}, "http://"+identityApp(t))
	o.backend = o.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "who"}})
	return o
}

// route creates an edge on host whose route has an oauth module with provider p.
func (o *oauthEnv) route(host string, module map[string]any) string {
	_, id := o.httpsEdge(host, o.backend, map[string]any{"oauth": module})
	return id
}

func allProviders() []string {
	return []string{"github", "facebook", "microsoft", "google", "linkedin", "gitlab", "twitch", "amazon"}
}

// TestOAuthProviders: each of the eight providers, with its real token and user API
// shapes: a visitor is sent to the provider, signs in, comes back to the page it asked for
// with a session, and the upstream receives the identity headers (never the visitor's
// forgeries, never the edge's cookies); an e-mail address and a domain the rules do not
// list are refused.
func TestOAuthProviders(t *testing.T) {
	o := newOAuthEnv(t, allProviders())
	for _, p := range allProviders() {
		t.Run(p, func(t *testing.T) {
			f := o.idps[p]
			host := p + ".oauth.example.test"
			o.route(host, map[string]any{"provider": map[string]any{p: f.app(map[string]any{
				"email_addresses": []string{"alice@example.com"}, "email_domains": []string{"corp.example"}})}})
			c := o.loginClient(o.certs...)
			status, body := f.signIn(c, "https://"+host+"/page?x=1", "alice@example.com")
			want := "GET /page?x=1 provider=" + p + " email=alice@example.com id=1001 name=alice forged= cookie=<"
			if status != 200 || !strings.Contains(strings.ReplaceAll(body, "</p>", "<"), want) {
				t.Fatalf("after the sign-in: %d %q, want %q", status, body, want)
			}
			// Signed in: the next request goes straight to the app; forged identity headers
			// and the edge's cookies never arrive.
			req, _ := http.NewRequest("GET", "https://"+host+"/again", nil)
			req.Header.Set("Warren-Auth-User-Email", "root@example.com")
			req.Header.Set("Warren-Auth-Forged", "yes")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, "GET /again provider="+p+" email=alice@example.com id=1001 name=alice forged= cookie=<") {
				t.Fatalf("signed in: %d %q", resp.StatusCode, body)
			}
			// A domain rule admits bob.
			if status, body := f.signIn(o.loginClient(o.certs...), "https://"+host+"/", "bob@corp.example"); status != 200 || !strings.Contains(body, "email=bob@corp.example") {
				t.Fatalf("bob: %d %q", status, body)
			}
			// mallory is in neither list.
			status, body = f.signIn(o.loginClient(o.certs...), "https://"+host+"/", "mallory@evil.example")
			if status != http.StatusForbidden || !strings.Contains(body, "ERR_8040") || !strings.Contains(body, "mallory@evil.example") {
				t.Fatalf("mallory: %d %q", status, body)
			}
		})
	}
}

// TestOAuthGitHubTeamsAndOrganizations: teams (numeric ID or org/slug) and organizations
// admit their members, read:org is asked for, and nobody else gets in.
func TestOAuthGitHubTeamsAndOrganizations(t *testing.T) {
	o := newOAuthEnv(t, []string{"github"})
	f := o.idps["github"]
	f.users["alice@example.com"] = fakeUser{id: "1001", email: "alice@example.com", name: "alice", verified: true, teams: []fakeTeam{{id: 42, org: "Acme", slug: "ops"}}}
	f.users["bob@corp.example"] = fakeUser{id: "1003", email: "bob@corp.example", name: "bob", verified: true, orgs: []string{"Widgets"}}
	o.route("teams.example.test", map[string]any{"provider": map[string]any{"github": f.app(map[string]any{"teams": []string{"acme/ops"}})}})
	o.route("teamid.example.test", map[string]any{"provider": map[string]any{"github": f.app(map[string]any{"teams": []string{"42"}})}})
	o.route("orgs.example.test", map[string]any{"provider": map[string]any{"github": f.app(map[string]any{"organizations": []string{"widgets"}})}})
	for _, tc := range []struct {
		host, email string
		ok          bool
	}{
		{"teams.example.test", "alice@example.com", true},
		{"teamid.example.test", "alice@example.com", true},
		{"orgs.example.test", "bob@corp.example", true},
		{"teams.example.test", "bob@corp.example", false},
		{"orgs.example.test", "alice@example.com", false},
	} {
		status, body := f.signIn(o.loginClient(o.certs...), "https://"+tc.host+"/", tc.email)
		if got := status == 200 && strings.Contains(body, "email="+tc.email); got != tc.ok || !tc.ok && status != http.StatusForbidden {
			t.Fatalf("%s as %s: %d %q, want admitted %v", tc.host, tc.email, status, body, tc.ok)
		}
	}
	if scope := f.authorize[0].Get("scope"); !strings.Contains(scope, "read:org") || !strings.Contains(scope, "user:email") {
		t.Fatalf("GitHub scopes %q", scope)
	}
	if f.authorize[0].Get("code_challenge_method") != "S256" || f.authorize[0].Get("code_challenge") == "" {
		t.Fatalf("GitHub login without PKCE: %v", f.authorize[0])
	}
}

// noFollow is c, its jar kept, without following redirects.
func noFollow(c *http.Client) *http.Client {
	n := *c
	n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &n
}

// reseal rewrites the session cookie that c holds for host with edit, as the edge would
// seal it (the codec is the store's, as every replica's).
func (e *env) reseal(c *http.Client, host, cookie, routeID string, edit func(*session.Session)) {
	e.t.Helper()
	codec, err := session.CodecFor(e.srv.Store)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := url.Parse("https://" + host + "/")
	purpose := "route session " + routeID // signin.go's sessionPurpose
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name != cookie {
			continue
		}
		var s session.Session
		if err := codec.Open(purpose, ck.Value, &s); err != nil {
			e.t.Fatal(err)
		}
		edit(&s)
		v, err := codec.Seal(purpose, &s)
		if err != nil {
			e.t.Fatal(err)
		}
		c.Jar.SetCookies(u, []*http.Cookie{{Name: cookie, Value: v, Path: "/", Secure: true, HttpOnly: true}})
		return
	}
	e.t.Fatalf("no cookie %s for %s", cookie, host)
}

// expectLogin checks that a visit to pageURL is sent to f's sign-in page.
func expectLogin(t *testing.T, c *http.Client, pageURL string, f *fakeIdP) {
	t.Helper()
	resp, err := noFollow(c).Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, f.srv.URL+"/authorize?") {
		t.Fatalf("GET %s: %d to %q, want the sign-in at %s", pageURL, resp.StatusCode, loc, f.srv.URL)
	}
}

// TestOAuthSessionLifetimes: a session idle longer than inactivity_timeout, or older than
// maximum_duration, sends the visitor back to the provider; a live one is served and its
// last-seen time moves; with auth_check_interval, the user is checked at the provider again
// and a revoked token ends the session.
func TestOAuthSessionLifetimes(t *testing.T) {
	o := newOAuthEnv(t, []string{"gitlab"})
	f := o.idps["gitlab"]
	host := "life.example.test"
	id := o.route(host, map[string]any{"cookie_prefix": "app.", "inactivity_timeout": 600, "maximum_duration": 7200, "auth_check_interval": 300,
		"provider": map[string]any{"gitlab": f.app(nil)}})
	cookie := session.CookieName("app.")
	page := "https://" + host + "/"
	login := func() *http.Client {
		c := o.loginClient(o.certs...)
		if status, body := f.signIn(c, page, "alice@example.com"); status != 200 || !strings.Contains(body, "email=alice@example.com") {
			t.Fatalf("sign-in: %d %q", status, body)
		}
		return c
	}
	served := func(c *http.Client) {
		t.Helper()
		status, body, _ := o.get(c, page)
		if status != 200 || !strings.Contains(body, "email=alice@example.com") {
			t.Fatalf("a live session was not served: %d %q", status, body)
		}
	}

	c := login()
	o.reseal(c, host, cookie, id, func(s *session.Session) { s.Seen = time.Now().Add(-11 * time.Minute) })
	expectLogin(t, c, page, f)

	c = login()
	o.reseal(c, host, cookie, id, func(s *session.Session) {
		s.Created, s.Seen, s.Checked = time.Now().Add(-121*time.Minute), time.Now(), time.Now()
	})
	expectLogin(t, c, page, f)

	// Idle for 9 minutes: still live, and seen again now.
	c = login()
	o.reseal(c, host, cookie, id, func(s *session.Session) { s.Seen = time.Now().Add(-9 * time.Minute) })
	served(c)
	o.reseal(c, host, cookie, id, func(s *session.Session) {
		if time.Since(s.Seen) > time.Minute {
			t.Fatalf("the session's last-seen time did not move: %v", s.Seen)
		}
	})

	// Due for a check: the provider still knows the token, the session goes on.
	o.reseal(c, host, cookie, id, func(s *session.Session) { s.Checked = time.Now().Add(-6 * time.Minute) })
	served(c)
	o.reseal(c, host, cookie, id, func(s *session.Session) {
		if time.Since(s.Checked) > time.Minute {
			t.Fatalf("the session was not checked: %v", s.Checked)
		}
	})
	// Revoked at the provider: not before the interval, then back to the sign-in.
	f.revoke("alice@example.com")
	served(c)
	o.reseal(c, host, cookie, id, func(s *session.Session) { s.Checked = time.Now().Add(-6 * time.Minute) })
	expectLogin(t, c, page, f)
}

// TestOAuthLogoutAndOptions: the logout path ends the session; the reserved paths never
// reach the upstream; OPTIONS passes without a session only with options_passthrough.
func TestOAuthLogoutAndOptions(t *testing.T) {
	o := newOAuthEnv(t, []string{"google"})
	f := o.idps["google"]
	o.route("pass.example.test", map[string]any{"options_passthrough": true, "provider": map[string]any{"google": f.app(nil)}})
	o.route("closed.example.test", map[string]any{"provider": map[string]any{"google": f.app(nil)}})

	c := o.loginClient(o.certs...)
	if status, body := f.signIn(c, "https://pass.example.test/", "alice@example.com"); status != 200 || !strings.Contains(body, "email=alice@example.com") {
		t.Fatalf("sign-in: %d %q", status, body)
	}
	status, body, _ := o.get(c, "https://pass.example.test"+session.LogoutPath)
	if status != 200 || !strings.Contains(body, "signed out") {
		t.Fatalf("logout: %d %q", status, body)
	}
	expectLogin(t, c, "https://pass.example.test/", f)
	o.expectPage(c, "https://pass.example.test"+session.PathPrefix+"other", http.StatusNotFound, "ERR_8044")

	for host, want := range map[string]int{"pass.example.test": 200, "closed.example.test": http.StatusFound} {
		req, _ := http.NewRequest("OPTIONS", "https://"+host+"/cors", nil)
		resp, err := noFollow(o.loginClient(o.certs...)).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(resp)
		if resp.StatusCode != want || want == 200 && !strings.Contains(body, "OPTIONS /cors provider= email=") {
			t.Fatalf("OPTIONS on %s without a session: %d %q, want %d", host, resp.StatusCode, body, want)
		}
	}
	// A callback without a login under way, or with another state, is refused.
	o.expectPage(o.loginClient(o.certs...), "https://closed.example.test"+session.CallbackPath+"?code=x&state=y", http.StatusBadRequest, "ERR_8041")
}

// TestOAuthManagedApp: a module without client_id signs in with the server's managed app
// of that provider; a provider the operator configured no app for is refused with a page
// and a log line saying so.
func TestOAuthManagedApp(t *testing.T) {
	o := newOAuthEnv(t, []string{"google", "gitlab"}, "google")
	g := o.idps["google"]
	o.route("managed.example.test", map[string]any{"provider": map[string]any{"google": map[string]any{}}})
	o.route("unmanaged.example.test", map[string]any{"provider": map[string]any{"gitlab": map[string]any{}}})
	if status, body := g.signIn(o.loginClient(o.certs...), "https://managed.example.test/", "alice@example.com"); status != 200 || !strings.Contains(body, "email=alice@example.com") {
		t.Fatalf("managed app: %d %q", status, body)
	}
	if got := g.authorize[0].Get("client_id"); got != g.clientID {
		t.Fatalf("the managed app's client_id: %q", got)
	}
	body := o.expectPage(o.loginClient(o.certs...), "https://unmanaged.example.test/", http.StatusServiceUnavailable, "ERR_8043")
	if !strings.Contains(body, "gitlab") {
		t.Fatalf("the page does not name the provider: %q", body)
	}
	if n := o.logs.FilterMessageSnippet("--oauth-<provider>-client-id").Len(); n == 0 {
		t.Fatal("no log line about the missing managed app")
	}
}

// TestOAuthOnPathRoute: the module on a route that matches /admin only: the provider's
// callback on the host reaches it, the visitor ends on the page it asked for, and the
// edge's other route is served without a sign-in. A login begun by a POST comes back to the
// route's match.
func TestOAuthOnPathRoute(t *testing.T) {
	o := newOAuthEnv(t, []string{"gitlab"})
	f := o.idps["gitlab"]
	edgeID, _ := o.httpsEdge("paths.example.test", o.backend, nil)
	o.create("/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/admin",
		"backend": map[string]any{"backend_id": o.backend}, "oauth": map[string]any{"provider": map[string]any{"gitlab": f.app(nil)}}})

	status, body, _ := o.get(o.client(), "https://paths.example.test/open")
	if status != 200 || !strings.Contains(body, "GET /open provider= email= ") {
		t.Fatalf("the open route: %d %q", status, body)
	}
	c := o.loginClient(o.certs...)
	status, body = f.signIn(c, "https://paths.example.test/admin/users?id=7", "alice@example.com")
	if status != 200 || !strings.Contains(body, "GET /admin/users?id=7 provider=gitlab email=alice@example.com ") {
		t.Fatalf("the protected route: %d %q", status, body)
	}

	c = o.loginClient(o.certs...)
	resp, err := noFollow(c).Post("https://paths.example.test/admin/form", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), f.srv.URL+"/authorize?") {
		t.Fatalf("a POST without a session: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	status, body = signInVia(t, c, resp.Header.Get("Location"), "Sign in to gitlab", "alice@example.com")
	if status != 200 || !strings.Contains(body, "GET /admin provider=gitlab email=alice@example.com ") {
		t.Fatalf("after a sign-in begun by a POST: %d %q", status, body)
	}
}
