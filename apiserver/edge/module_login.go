package edge

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/oauth2"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// login is the sign-in the oauth and oidc modules share (module_oauth.go, module_oidc.go),
// on the route's own host:
//
//   - a visitor without a live session cookie is redirected to the provider, the login's
//     state, nonce and PKCE verifier and the page to come back to sealed in the state
//     cookie (10 minutes);
//   - session.CallbackPath checks the state, exchanges the code, reads the identity, applies
//     the allow rules, seals the session cookie and sends the visitor back to the page;
//   - session.LogoutPath ends the session; other reserved paths are not found;
//   - a signed-in request goes on with the identity headers set and the edge's cookies
//     removed, the session checked at the provider again every checkEvery (oauth).
type login struct {
	signIn
	root        string // where a login begun by other than GET or HEAD comes back to
	stateCookie string
	checkEvery  time.Duration // 0: the identity is never checked again
	allow       allowRules
	idp         identityProvider
}

// identityProvider is what a module signs visitors in with.
type identityProvider interface {
	// authURL is the provider's page where the visitor signs in for st, coming back to
	// redirect.
	authURL(ctx context.Context, x *exchange, redirect string, st *loginState) (string, error)
	// identify ends a login: the code exchanged, the visitor's identity read. token is kept
	// in the session for recheck.
	identify(ctx context.Context, x *exchange, redirect, code string, st *loginState) (id signedIn, token string, err error)
	// recheck reads the identity again with the token (oauth's auth_check_interval).
	recheck(ctx context.Context, x *exchange, token string) (signedIn, error)
}

// signedIn is an identity with what the allow rules look at beyond it.
type signedIn struct {
	session.Identity
	teams, orgs []string // GitHub: team IDs and org/slug names, organization logins (lowercase)
}

// loginState is a login under way, sealed in the state cookie.
type loginState struct {
	Route    string    `json:"r"`
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Return   string    `json:"u"` // an absolute URL on the route's host
	Started  time.Time `json:"t"`
}

// loginTTL bounds a login from the redirect to the callback.
const loginTTL = 10 * time.Minute

// Errors of an identity provider, as the visitor's page tells them.
var (
	// errLoginRefused: the provider refused the code or the token (a 4xx answer, a bad ID
	// token): the login fails, the provider works.
	errLoginRefused = errors.New("the identity provider refused the login")
)

// noManagedApp: the module uses the managed app of a provider the operator did not
// configure (server flags --oauth-<provider>-client-id and -client-secret).
type noManagedApp struct{ provider string }

func (e noManagedApp) Error() string { return "no managed OAuth app for " + e.provider }

// providerError is an identity provider that could not be reached or failed.
type providerError struct{ err error }

func (e providerError) Error() string { return "identity provider: " + e.err.Error() }
func (e providerError) Unwrap() error { return e.err }

func newLogin(routeID, match string, s api.SessionFields, idp identityProvider) *login {
	root := match
	if !strings.HasPrefix(root, "/") {
		root = "/"
	}
	stateCookie := session.StateCookieName(s.CookiePrefix)
	return &login{signIn: newSignIn(routeID, s, stateCookie), root: root, stateCookie: stateCookie, idp: idp}
}

func (l *login) statePurpose() string { return "route login " + l.routeID }

func (l *login) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	if r.URL.Path == session.CallbackPath {
		l.callback(w, r, x)
		return
	}
	if l.reserved(w, r, x, next) {
		return
	}
	now := x.e.opts.Now()
	s, ok := l.session(r, x, now)
	if !ok {
		l.begin(w, r, x)
		return
	}
	changed := false
	if l.checkEvery > 0 && now.Sub(s.Checked) >= l.checkEvery {
		id, err := l.idp.recheck(r.Context(), x, s.Token)
		if err != nil {
			x.e.log.Info("edge: a session's check at the identity provider failed; the session ends",
				zap.String("route_id", l.routeID), zap.String("user_id", s.Identity.Subject), zap.Error(err))
			session.ClearCookie(w, l.cookies[0])
			l.begin(w, r, x)
			return
		}
		if !l.allow.admits(id) {
			session.ClearCookie(w, l.cookies[0])
			l.deny(w, x, id)
			return
		}
		s.Identity, s.Checked, changed = id.Identity, now, true
	}
	if now.Sub(s.Seen) >= session.TouchEvery {
		s.Seen, changed = now, true
	}
	if changed && !l.save(w, x, s, now) {
		return
	}
	l.pass(w, r, x, next, s.Identity)
}

// begin sends the visitor to the provider's sign-in page.
func (l *login) begin(w http.ResponseWriter, r *http.Request, x *exchange) {
	st := &loginState{Route: l.routeID, State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Started: time.Now()}
	st.Return = "https://" + r.Host + l.root
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		st.Return = "https://" + r.Host + r.URL.RequestURI()
	}
	u, err := l.idp.authURL(r.Context(), x, callbackURL(r), st)
	if err != nil {
		l.fail(w, x, err)
		return
	}
	sealed, err := x.e.sessions.Seal(l.statePurpose(), st)
	if err != nil {
		x.refuse(w, http.StatusInternalServerError, errConfig, "The login could not be sealed.")
		return
	}
	session.SetCookie(w, l.stateCookie, sealed, loginTTL)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u, http.StatusFound)
}

// callbackURL is where the provider sends the visitor back: the route's own host.
func callbackURL(r *http.Request) string { return "https://" + r.Host + session.CallbackPath }

func (l *login) callback(w http.ResponseWriter, r *http.Request, x *exchange) {
	q := r.URL.Query()
	var st loginState
	c, err := r.Cookie(l.stateCookie)
	switch {
	case err != nil || x.e.sessions.Open(l.statePurpose(), c.Value, &st) != nil || st.Route != l.routeID:
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "No sign-in is under way in this browser (the login cookie is missing): start again from the page you wanted.")
		return
	case time.Since(st.Started) > loginTTL:
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "The sign-in took longer than %s: start again from the page you wanted.", loginTTL)
		return
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1:
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "The sign-in's state does not match this browser's login.")
		return
	case q.Get("error") != "":
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "The identity provider did not sign you in: %s.", strings.TrimSpace(q.Get("error")+" "+q.Get("error_description")))
		return
	case q.Get("code") == "":
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "The identity provider sent no code.")
		return
	}
	id, token, err := l.idp.identify(r.Context(), x, callbackURL(r), q.Get("code"), &st)
	if err != nil {
		l.fail(w, x, err)
		return
	}
	session.ClearCookie(w, l.stateCookie)
	if !l.allow.admits(id) {
		l.deny(w, x, id)
		return
	}
	now := x.e.opts.Now()
	s := &session.Session{RouteID: l.routeID, Identity: id.Identity, Created: now, Seen: now, Checked: now, Token: token}
	if !l.save(w, x, s, now) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, st.Return, http.StatusFound)
}

// deny refuses a signed-in visitor whom the allow rules do not admit.
func (l *login) deny(w http.ResponseWriter, x *exchange, id signedIn) {
	who := id.Email
	if who == "" {
		who = "without a verified e-mail address"
	}
	x.refuse(w, http.StatusForbidden, errAuthDenied, "You are signed in at %s as %s, which this route does not allow.", id.Provider, who)
}

// fail answers a login that the provider or the configuration stopped.
func (l *login) fail(w http.ResponseWriter, x *exchange, err error) {
	var pe providerError
	var na noManagedApp
	switch {
	case errors.As(err, &na):
		x.e.log.Warn("edge: a route uses the managed OAuth app of a provider this server has no app for; set its --oauth-<provider>-client-id and --oauth-<provider>-client-secret",
			zap.String("route_id", l.routeID), zap.String("provider", na.provider))
		x.refuse(w, http.StatusServiceUnavailable, errAuthNoApp, "The route signs in with the service's managed %s app, which this server does not have: its operator must configure it.", na.provider)
	case errors.As(err, &pe):
		x.e.log.Warn("edge: an identity provider failed", zap.String("route_id", l.routeID), zap.Error(err))
		x.refuse(w, http.StatusBadGateway, errAuthProvider, "The identity provider could not be reached or failed; try again later.")
	default:
		x.e.log.Info("edge: a login failed", zap.String("route_id", l.routeID), zap.Error(err))
		x.refuse(w, http.StatusBadRequest, errAuthLogin, "The sign-in failed: the identity provider did not accept it.")
	}
}

// allowRules admit a signed-in visitor: with none set, everyone; else one that any rule
// matches (the verified e-mail address, its domain, a GitHub team or organization).
type allowRules struct {
	emails, domains, teams, orgs []string // lowercase
}

func newAllowRules(emails, domains, teams, orgs []string) allowRules {
	lower := func(l []string) []string {
		out := make([]string, len(l))
		for i, v := range l {
			out[i] = strings.ToLower(v)
		}
		return out
	}
	return allowRules{lower(emails), lower(domains), lower(teams), lower(orgs)}
}

func (a allowRules) admits(id signedIn) bool {
	if len(a.emails)+len(a.domains)+len(a.teams)+len(a.orgs) == 0 {
		return true
	}
	email := strings.ToLower(id.Email)
	if email != "" {
		if slices.Contains(a.emails, email) {
			return true
		}
		if at := strings.LastIndexByte(email, '@'); at >= 0 && slices.Contains(a.domains, email[at+1:]) {
			return true
		}
	}
	return slices.ContainsFunc(id.teams, func(t string) bool { return slices.Contains(a.teams, t) }) ||
		slices.ContainsFunc(id.orgs, func(o string) bool { return slices.Contains(a.orgs, o) })
}

// oauth2Context carries the edge's client for identity providers to golang.org/x/oauth2.
func oauth2Context(ctx context.Context, x *exchange) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, x.e.authClient)
}

// exchangeCode trades the code for a token; a provider's 4xx is a refused login, anything
// else a provider that failed.
func exchangeCode(ctx context.Context, x *exchange, cfg *oauth2.Config, code string, st *loginState, pkce bool) (*oauth2.Token, error) {
	var opts []oauth2.AuthCodeOption
	if pkce {
		opts = append(opts, oauth2.VerifierOption(st.Verifier))
	}
	tok, err := cfg.Exchange(oauth2Context(ctx, x), code, opts...)
	var re *oauth2.RetrieveError
	switch {
	case err == nil:
		return tok, nil
	case errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500:
		return nil, fmt.Errorf("%w: %v", errLoginRefused, err)
	default:
		return nil, providerError{err}
	}
}

// statusError is an identity provider's API answering with a status other than 200.
func statusError(url string, status int) error {
	err := fmt.Errorf("GET %s: %s", url, strconv.Itoa(status)+" "+http.StatusText(status))
	if status >= 400 && status < 500 {
		return fmt.Errorf("%w: %v", errLoginRefused, err)
	}
	return providerError{err}
}
