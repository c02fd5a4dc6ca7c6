package edge_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
)

// fakeUser is someone a fake identity provider signs in.
type fakeUser struct {
	id, email, name string
	verified        bool
	teams           []fakeTeam // GitHub
	orgs            []string   // GitHub
}

type fakeTeam struct {
	id        int
	org, slug string
}

// fakeIdP is an OAuth provider served over TLS on loopback with one provider's real
// shapes: an HTML sign-in page at /authorize (the visitor types an e-mail address), the
// token endpoint at /token and the provider's user API under /api. It checks what a real
// provider checks: the client, the redirect URI, the code and its PKCE verifier, the
// bearer token.
type fakeIdP struct {
	t                *testing.T
	provider         string
	srv              *httptest.Server
	clientID, secret string

	mu        sync.Mutex
	users     map[string]fakeUser // by e-mail address
	codes     map[string]fakeGrant
	tokens    map[string]string // access token -> e-mail address
	authorize []url.Values      // the authorization requests, in order
}

type fakeGrant struct {
	email, redirect, challenge string
}

func newFakeIdP(t *testing.T, provider string, users ...fakeUser) *fakeIdP {
	f := &fakeIdP{t: t, provider: provider, clientID: provider + "-client", secret: provider + "-secret",
		users: map[string]fakeUser{}, codes: map[string]fakeGrant{}, tokens: map[string]string{}}
	for _, u := range users {
		f.users[u.email] = u
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", f.loginPage)
	mux.HandleFunc("POST /authorize", f.submit)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("/api/", f.userAPI)
	f.srv = httptest.NewTLSServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// options points the edge's provider at f: endpoints, and f's app as the managed app.
func (f *fakeIdP) options(managed bool) edge.OAuthProvider {
	p := edge.OAuthProvider{AuthURL: f.srv.URL + "/authorize", TokenURL: f.srv.URL + "/token", APIURL: f.srv.URL + "/api"}
	if managed {
		p.ClientID, p.ClientSecret = f.clientID, f.secret
	}
	return p
}

// app is the module's provider member with f's client as its own app.
func (f *fakeIdP) app(extra map[string]any) map[string]any {
	m := map[string]any{"client_id": f.clientID, "client_secret": f.secret}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func (f *fakeIdP) loginPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.authorize = append(f.authorize, q)
	f.mu.Unlock()
	if q.Get("client_id") != f.clientID || q.Get("response_type") != "code" || q.Get("state") == "" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad authorization request: "+q.Encode(), http.StatusBadRequest)
		return
	}
	var hidden strings.Builder
	for k := range q {
		fmt.Fprintf(&hidden, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(q.Get(k)))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><head><title>Sign in to %s</title></head><body>
<h1 id="provider">Sign in to %s</h1>
<form method="post" action="/authorize">%s<input id="email" name="email" type="email"><button id="submit" type="submit">Sign in</button></form>
</body></html>`, f.provider, f.provider, hidden.String())
}

// submit is the form's post: the user signs in and goes back to the redirect URI.
func (f *fakeIdP) submit(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	email := r.PostForm.Get("email")
	f.mu.Lock()
	_, known := f.users[email]
	code := fmt.Sprintf("code-%d", len(f.codes)+1)
	if known {
		f.codes[code] = fakeGrant{email: email, redirect: r.PostForm.Get("redirect_uri"), challenge: r.PostForm.Get("code_challenge")}
	}
	f.mu.Unlock()
	if !known {
		http.Error(w, "no such user", http.StatusUnauthorized)
		return
	}
	back, _ := url.Parse(r.PostForm.Get("redirect_uri"))
	back.RawQuery = url.Values{"code": {code}, "state": {r.PostForm.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (f *fakeIdP) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	f.mu.Lock()
	g, found := f.codes[r.PostForm.Get("code")]
	delete(f.codes, r.PostForm.Get("code"))
	f.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case id != f.clientID || secret != f.secret:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client"}`)
		return
	case !found || g.redirect != r.PostForm.Get("redirect_uri") || r.PostForm.Get("grant_type") != "authorization_code",
		g.challenge != "" && base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_grant"}`)
		return
	}
	tok := fmt.Sprintf("%s-token-%d", f.provider, time.Now().UnixNano())
	f.mu.Lock()
	f.tokens[tok] = g.email
	f.mu.Unlock()
	switch f.provider {
	case "github": // GitHub answers form-encoded unless asked for JSON
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		fmt.Fprint(w, url.Values{"access_token": {tok}, "token_type": {"bearer"}, "scope": {"read:user,user:email"}}.Encode())
	case "twitch":
		writeJSON(w, map[string]any{"access_token": tok, "refresh_token": "r", "expires_in": 14400, "scope": []string{"user:read:email"}, "token_type": "bearer"})
	default:
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	}
}

// revoke ends every token of email: the provider's user API refuses them.
func (f *fakeIdP) revoke(email string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tok, e := range f.tokens {
		if e == email {
			delete(f.tokens, tok)
		}
	}
}

func (f *fakeIdP) userAPI(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	email, ok := f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	u := f.users[email]
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"message": "Bad credentials"})
		return
	}
	email = ""
	if u.verified {
		email = u.email
	}
	path := strings.TrimPrefix(r.URL.Path, "/api")
	switch f.provider + " " + path {
	case "github /user":
		writeJSON(w, map[string]any{"login": u.name, "id": atoi(u.id), "name": nil, "email": nil})
	case "github /user/emails":
		writeJSON(w, []map[string]any{
			{"email": "other@" + u.name + ".example", "primary": false, "verified": true, "visibility": nil},
			{"email": u.email, "primary": true, "verified": u.verified, "visibility": "public"},
		})
	case "github /user/teams":
		var teams []map[string]any
		for _, t := range u.teams {
			teams = append(teams, map[string]any{"id": t.id, "slug": t.slug, "name": t.slug, "organization": map[string]any{"login": t.org, "id": 1}})
		}
		writeJSON(w, teams)
	case "github /user/orgs":
		var orgs []map[string]any
		for _, o := range u.orgs {
			orgs = append(orgs, map[string]any{"login": o, "id": 1})
		}
		writeJSON(w, orgs)
	case "facebook /me":
		if r.URL.Query().Get("fields") != "id,name,email" {
			http.Error(w, "fields", http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{"id": u.id, "name": u.name, "email": email})
	case "microsoft /me":
		writeJSON(w, map[string]any{"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity", "id": u.id, "displayName": u.name, "mail": email, "userPrincipalName": u.email})
	case "google /userinfo", "linkedin /userinfo":
		writeJSON(w, map[string]any{"sub": u.id, "name": u.name, "email": u.email, "email_verified": u.verified, "locale": "en"})
	case "gitlab /user":
		var confirmed any
		if u.verified {
			confirmed = "2024-01-01T00:00:00.000Z"
		}
		writeJSON(w, map[string]any{"id": atoi(u.id), "username": u.name, "name": u.name, "email": u.email, "confirmed_at": confirmed, "state": "active"})
	case "twitch /users":
		if r.Header.Get("Client-Id") != f.clientID {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		writeJSON(w, map[string]any{"data": []map[string]any{{"id": u.id, "login": u.name, "display_name": u.name, "email": email, "type": "", "broadcaster_type": ""}}})
	case "amazon /user/profile":
		writeJSON(w, map[string]any{"user_id": u.id, "name": u.name, "email": email})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// identityApp starts an app on loopback that answers with the identity headers and the
// cookies it received.
func identityApp(t *testing.T) string {
	t.Helper()
	l := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><body><p id="who">%s %s provider=%s email=%s id=%s name=%s forged=%s cookie=%s</p></body></html>`,
			r.Method, r.URL.RequestURI(), r.Header.Get(session.HeaderProvider), r.Header.Get(session.HeaderEmail),
			r.Header.Get(session.HeaderSubject), r.Header.Get(session.HeaderName), r.Header.Get("Warren-Auth-Forged"), r.Header.Get("Cookie"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// loginClient is a visitor with a cookie jar that follows redirects: to the edge (every
// name on its HTTPS listener) and to the identity providers on loopback.
func (e *env) loginClient(idpCerts ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(e.ca.cert)
	for _, c := range idpCerts {
		pool.AddCert(c)
	}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 20 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
				addr = e.https.Addr().String()
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
}

// signIn follows a visit to pageURL to f's sign-in page and signs in there as email; it
// returns the status and body the visitor ends with.
func (f *fakeIdP) signIn(c *http.Client, pageURL, email string) (int, string) {
	f.t.Helper()
	return signInVia(f.t, c, pageURL, "Sign in to "+f.provider, email)
}

// signInVia visits pageURL, expects to land on a provider's sign-in form (its page says
// marker) and submits it as email, as a browser would; it returns where the visitor ends.
func signInVia(t *testing.T, c *http.Client, pageURL, marker, email string) (int, string) {
	t.Helper()
	resp, err := c.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(resp)
	if resp.StatusCode != 200 || !strings.Contains(page, marker) {
		t.Fatalf("GET %s: not at the sign-in page %q: %d %q", pageURL, marker, resp.StatusCode, page)
	}
	form := resp.Request.URL.Query()
	form.Set("email", email)
	action := *resp.Request.URL
	action.RawQuery = ""
	resp, err = c.PostForm(action.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readAll(resp)
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
