package edge

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/crewjam/saml"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
)

// SAMLHandler serves the service provider URLs of every route with a saml module, which
// the API server mounts under /saml/ (its base URL is theirs: the route's entity_id and
// metadata_url /saml/{route_id}, its assertion_consumer_service_url …/acs, its
// single_logout_url …/slo). Any replica serves any route: the routing snapshot has them
// all and the seals open everywhere.
func (e *Edge) SAMLHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /saml/{route_id}", e.withSAMLRoute(e.samlMetadata))
	mux.HandleFunc("POST /saml/{route_id}/acs", e.withSAMLRoute(e.samlACS))
	mux.HandleFunc("/saml/{route_id}/slo", e.withSAMLRoute(e.samlSLO))
	return mux
}

func (e *Edge) withSAMLRoute(h func(http.ResponseWriter, *http.Request, *samlRoute)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("route_id")
		s, ok := e.Snapshot(r.Context()).saml[id]
		if !ok {
			e.page(w, &visit{routeID: id}, http.StatusNotFound, errNoRoute, "No route with an enabled saml module has this ID.")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, s)
	}
}

// samlMetadata serves the route's SP metadata: entity ID, ACS, SLO and the signing
// certificate, for the IdP.
func (e *Edge) samlMetadata(w http.ResponseWriter, _ *http.Request, s *samlRoute) {
	buf, err := xml.MarshalIndent(s.sp.Metadata(), "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/samlmetadata+xml")
	_, _ = w.Write(append([]byte(xml.Header), buf...))
}

// samlACS checks the IdP's answer (HTTP-POST binding) and hands the login to the route's
// host. An answer to a login this route started carries its sealed RelayState (the
// request ID it must answer, the page to return to); any other is IdP-initiated, taken only
// with allow_idp_initiated (crewjam/saml refuses it otherwise).
func (e *Edge) samlACS(w http.ResponseWriter, r *http.Request, s *samlRoute) {
	v := &visit{routeID: s.routeID}
	if err := r.ParseForm(); err != nil {
		e.page(w, v, http.StatusBadRequest, errAuthLogin, "The identity provider's answer cannot be read.")
		return
	}
	now := e.opts.Now()
	var relay samlRelay
	var requestIDs []string
	var back string
	if e.sessions.Open(s.purpose("relay"), r.PostForm.Get("RelayState"), &relay) == nil && now.Unix() < relay.Expires {
		requestIDs, back = []string{relay.RequestID}, relay.Return
	} else {
		u, err := s.landing(r.PostForm.Get("RelayState"))
		if err != nil {
			e.page(w, v, http.StatusInternalServerError, errConfig, "The route's edge has no host to sign in to.")
			return
		}
		back = u.String()
	}
	sp := *s.sp // the edge's replay cache outlives the snapshot the route is compiled in
	sp.ReplayCache = e.samlReplay
	assertion, err := sp.ParseResponse(r, requestIDs)
	if err != nil {
		var invalid *saml.InvalidResponseError
		if errors.As(err, &invalid) {
			err = invalid.PrivateErr
		}
		e.log.Info("saml: an answer of the identity provider is refused", zap.String("route_id", s.routeID), zap.Error(err))
		e.page(w, v, http.StatusForbidden, errAuthLogin, "The identity provider's answer is refused (not valid, expired, already used, or unsolicited).")
		return
	}
	id := samlIdentity(assertion)
	if id.Subject == "" {
		e.page(w, v, http.StatusForbidden, errAuthLogin, "The identity provider's answer names no subject.")
		return
	}
	if !s.authorized(id) {
		e.page(w, v, http.StatusForbidden, errAuthDenied, "%s is signed in but not in a group allowed on this route.", id.Subject)
		return
	}
	dest, err := samlHandoffURL(back)
	var token string
	if err == nil {
		token, err = e.sessions.Seal(s.purpose("handoff"), samlHandoff{Identity: id, Return: dest.RequestURI(), Nonce: random(), Expires: now.Add(samlHandoffTTL).Unix()})
	}
	if err != nil {
		e.page(w, v, http.StatusInternalServerError, errConfig, "The sign-in cannot be handed to the route.")
		return
	}
	http.Redirect(w, r, "https://"+dest.Host+session.CallbackPath+"?token="+token, http.StatusSeeOther)
}

// samlHandoffURL parses the page a login returns to.
func samlHandoffURL(back string) (*url.URL, error) {
	u, err := url.Parse(back)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("saml: not a page of the route: %q", back)
	}
	return u, nil
}

// samlSLO answers the IdP's LogoutRequest: the user's sessions on the route that this
// replica serves end (sessions are cookies on the route's host: another replica serves
// them until it hears of the logout itself or they time out), and the IdP gets a
// LogoutResponse. A LogoutResponse (to a logout the edge never starts) is ignored.
func (e *Edge) samlSLO(w http.ResponseWriter, r *http.Request, s *samlRoute) {
	v := &visit{routeID: s.routeID}
	_ = r.ParseForm() // the RelayState, in the query or the form
	req, err := s.sp.ValidateLogoutRequest(r)
	if err != nil || req.NameID == nil {
		e.page(w, v, http.StatusBadRequest, errAuthLogin, "Not a valid logout request of the identity provider.")
		return
	}
	e.samlLogouts.record(s.routeID, req.NameID.Value, e.opts.Now())
	form, err := s.sp.MakePostLogoutResponse(req.ID, r.Form.Get("RelayState"))
	if err != nil {
		e.page(w, v, http.StatusInternalServerError, errConfig, "The logout cannot be answered.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>Signed out</title></head><body>%s</body></html>", form)
}

// samlLogouts remembers the IdP's logouts: a session of the user on the route created
// before it is over. At most samlReplayEntries users are remembered (then the oldest go).
type samlLogouts struct {
	mu sync.Mutex
	at map[string]time.Time
}

func samlLogoutKey(routeID, subject string) string { return routeID + "\x00" + subject }

func (l *samlLogouts) record(routeID, subject string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil {
		l.at = map[string]time.Time{}
	}
	if len(l.at) >= samlReplayEntries {
		oldest, first := "", true
		for k, t := range l.at {
			if first || t.Before(l.at[oldest]) {
				oldest, first = k, false
			}
		}
		delete(l.at, oldest)
	}
	l.at[samlLogoutKey(routeID, subject)] = now
}

// ended reports whether the IdP logged the user out after the session began.
func (l *samlLogouts) ended(routeID, subject string, created time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.at[samlLogoutKey(routeID, subject)]
	return ok && !created.After(t)
}
