package edge

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// signIn is what the sign-in modules share on a route (oauth and oidc through login,
// module_login.go; saml through samlRoute, module_saml.go): the session cookie and its
// lifetimes, the reserved paths other than the callback, OPTIONS passed through, and a
// signed-in request handed on. The session's clock is Options.Now.
type signIn struct {
	routeID     string
	cookies     []string // the module's cookies, the session cookie first: never sent upstream
	limits      session.Limits
	passOptions bool
}

func newSignIn(routeID string, s api.SessionFields, moreCookies ...string) signIn {
	return signIn{
		routeID:     routeID,
		cookies:     append([]string{session.CookieName(s.CookiePrefix)}, moreCookies...),
		limits:      session.Limits{Inactivity: seconds(s.InactivityTimeout), Maximum: seconds(s.MaximumDuration)},
		passOptions: s.OptionsPassthrough,
	}
}

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }

func (g *signIn) sessionPurpose() string { return "route session " + g.routeID }

// reserved answers what every sign-in module answers alike: the logout path, an unknown
// reserved path, and (options_passthrough) an OPTIONS request, handed on without identity.
// It reports whether the request is done with; the callback path is the module's own.
func (g *signIn) reserved(w http.ResponseWriter, r *http.Request, x *exchange, next handler) bool {
	switch {
	case r.URL.Path == session.LogoutPath:
		for _, c := range g.cookies {
			session.ClearCookie(w, c)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("You are signed out.\n"))
	case r.URL.Path != session.CallbackPath && strings.HasPrefix(r.URL.Path, session.PathPrefix):
		x.refuse(w, http.StatusNotFound, errAuthPath, "%s is reserved for the sign-in; nothing is served there.", r.URL.Path)
	case r.Method == http.MethodOptions && g.passOptions:
		session.StripCookies(r, g.cookies...)
		next(w, r, x)
	default:
		return false
	}
	return true
}

// session opens the visitor's session cookie: false when there is none, it is not this
// route's, or it is no longer live at now.
func (g *signIn) session(r *http.Request, x *exchange, now time.Time) (*session.Session, bool) {
	c, err := r.Cookie(g.cookies[0])
	if err != nil {
		return nil, false
	}
	var s session.Session
	if x.e.sessions.Open(g.sessionPurpose(), c.Value, &s) != nil || s.RouteID != g.routeID || !s.Live(now, g.limits) {
		return nil, false
	}
	return &s, true
}

// save seals s into the session cookie, which the browser keeps until the maximum duration
// ends (without one, while it runs); false after an error page.
func (g *signIn) save(w http.ResponseWriter, x *exchange, s *session.Session, now time.Time) bool {
	sealed, err := x.e.sessions.Seal(g.sessionPurpose(), s)
	if err != nil {
		x.refuse(w, http.StatusInternalServerError, errConfig, "The session could not be sealed.")
		return false
	}
	var maxAge time.Duration
	if g.limits.Maximum > 0 {
		maxAge = max(s.Created.Add(g.limits.Maximum).Sub(now), time.Second)
	}
	session.SetCookie(w, g.cookies[0], sealed, maxAge)
	return true
}

// pass hands a signed-in request on: the identity headers set, the module's cookies removed.
func (g *signIn) pass(w http.ResponseWriter, r *http.Request, x *exchange, next handler, id session.Identity) {
	session.StripCookies(r, g.cookies...)
	session.SetHeaders(r.Header, id)
	next(w, r, x)
}

// random is 32 random bytes, URL-safe: a login's state and nonce, a handoff's nonce.
func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
