// Package session is what the edge's authentication modules (oauth, oidc, saml) share: a
// visitor's session sealed into a cookie that every replica can open, the reserved paths
// those modules serve on a route's own host, and the identity headers the upstream receives.
package session

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// Reserved paths on the host of a route with an authentication module: the edge answers
// them itself and never sends them upstream.
const (
	PathPrefix   = "/_warren/auth/"
	CallbackPath = PathPrefix + "callback" // the provider sends the visitor back here
	LogoutPath   = PathPrefix + "logout"   // ends the session
)

// HeaderPrefix starts every identity header. The edge removes any a visitor sends, on every
// route, before it sets its own: the upstream can trust them.
const HeaderPrefix = "Warren-Auth-"

// Identity headers the upstream receives from a route with an authentication module.
const (
	HeaderProvider = HeaderPrefix + "Provider"   // "github", "oidc", "saml" …
	HeaderSubject  = HeaderPrefix + "User-Id"    // the provider's stable ID of the user
	HeaderEmail    = HeaderPrefix + "User-Email" // verified e-mail address, when known
	HeaderName     = HeaderPrefix + "User-Name"  // display name, when known
	HeaderGroups   = HeaderPrefix + "Groups"     // comma-separated (SAML groups), when any
)

// Identity is who signed in.
type Identity struct {
	Provider string   `json:"p"`
	Subject  string   `json:"s"`
	Email    string   `json:"e,omitempty"`
	Name     string   `json:"n,omitempty"`
	Groups   []string `json:"g,omitempty"`
}

// SetHeaders puts id into h as the identity headers (after StripHeaders).
func SetHeaders(h http.Header, id Identity) {
	StripHeaders(h)
	h.Set(HeaderProvider, id.Provider)
	h.Set(HeaderSubject, id.Subject)
	if id.Email != "" {
		h.Set(HeaderEmail, id.Email)
	}
	if id.Name != "" {
		h.Set(HeaderName, id.Name)
	}
	if len(id.Groups) > 0 {
		h.Set(HeaderGroups, strings.Join(id.Groups, ","))
	}
}

// StripHeaders removes every identity header from h (a visitor's forgeries).
func StripHeaders(h http.Header) {
	for k := range h {
		if len(k) >= len(HeaderPrefix) && strings.EqualFold(k[:len(HeaderPrefix)], HeaderPrefix) {
			delete(h, k)
		}
	}
}

// Session is a signed-in visitor's session, kept sealed in a cookie on the route's host.
type Session struct {
	RouteID  string    `json:"r"`
	Identity Identity  `json:"i"`
	Created  time.Time `json:"c"` // maximum_duration counts from here
	Seen     time.Time `json:"a"` // the last request: inactivity_timeout counts from here
	Checked  time.Time `json:"k"` // the last check at the provider (oauth's auth_check_interval)
	// Token is what a later check at the provider needs (oauth: the access token).
	Token string `json:"t,omitempty"`
}

// Limits are a module's session lifetimes; zero is no limit.
type Limits struct {
	Inactivity, Maximum time.Duration
}

// Live reports whether the session is still valid at now under l.
func (s *Session) Live(now time.Time, l Limits) bool {
	if l.Maximum > 0 && now.Sub(s.Created) >= l.Maximum {
		return false
	}
	return l.Inactivity <= 0 || now.Sub(s.Seen) < l.Inactivity
}

// TouchEvery is how often a session's Seen is moved (and its cookie written again): not on
// every request, so that the inactivity timeout is exact to within a minute.
const TouchEvery = time.Minute

// Codec seals values into cookie-safe strings and opens them, under a keyring derived from
// the server's secret key for this purpose (sealing.Keyring.Derive): AES-256-GCM, with the
// purpose as additional data so that a value sealed for one route or use opens for no other.
type Codec struct{ keys *sealing.Keyring }

// NewCodec returns a Codec sealing with keys.
func NewCodec(keys *sealing.Keyring) *Codec { return &Codec{keys: keys} }

// ErrInvalid is a value that does not open: damaged, forged, from another route or use, or
// sealed under a key this server no longer has.
var ErrInvalid = errors.New("session: the value is not valid")

const sealKind = "edge session"

// Seal encodes v (JSON) sealed for purpose.
func (c *Codec) Seal(purpose string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(c.keys.Seal(sealKind, purpose, plain)), nil
}

// Open decodes into v what Seal sealed for purpose.
func (c *Codec) Open(purpose, sealed string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || !sealing.Sealed(raw) {
		return ErrInvalid
	}
	plain, err := c.keys.Open(sealKind, purpose, raw)
	if err != nil {
		return ErrInvalid
	}
	if json.Unmarshal(plain, v) != nil {
		return ErrInvalid
	}
	return nil
}

// CookieName is the session cookie of a module with this cookie_prefix.
func CookieName(prefix string) string { return prefix + "warren_session" }

// StateCookieName is the cookie that carries a login in progress (its state, nonce and the
// page to return to) from the redirect to the provider to the callback.
func StateCookieName(prefix string) string { return prefix + "warren_login" }

// StripCookies removes the named cookies from r's Cookie header: the upstream never sees
// the edge's sessions.
func StripCookies(r *http.Request, names ...string) {
	cookies := r.Cookies()
	if len(cookies) == 0 {
		return
	}
	kept := cookies[:0]
	for _, c := range cookies {
		drop := false
		for _, n := range names {
			drop = drop || c.Name == n
		}
		if !drop {
			kept = append(kept, c)
		}
	}
	r.Header.Del("Cookie")
	if len(kept) == 0 {
		return
	}
	parts := make([]string, len(kept))
	for i, c := range kept {
		parts[i] = c.Name + "=" + c.Value
	}
	r.Header.Set("Cookie", strings.Join(parts, "; "))
}

// SetCookie writes a cookie for the route's host: Secure, HttpOnly, SameSite=Lax (the
// provider's redirect back is a top-level GET), for every path.
func SetCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, c)
}

// ClearCookie removes a cookie.
func ClearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// CodecFor returns the codec of the edge's sessions for st: keys derived from the store's
// secret keys when it has them (so every replica, and the API beside the edge, opens what
// another sealed), else a random key of this process.
func CodecFor(st any) (*Codec, error) {
	if k, ok := st.(interface{ Keys() *sealing.Keyring }); ok && k.Keys() != nil {
		derived, err := k.Keys().Derive("edge sessions")
		if err != nil {
			return nil, err
		}
		return NewCodec(derived), nil
	}
	processKeysOnce.Do(func() { processKeys, _ = sealing.NewKeyring(sealing.GenerateKey()) })
	return NewCodec(processKeys), nil
}

var (
	processKeysOnce sync.Once
	processKeys     *sealing.Keyring
)
