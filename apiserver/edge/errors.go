package edge

import (
	"fmt"
	"net/http"
	"strconv"
)

// The Warren error codes of the pages a visitor gets (ERR_8001-ERR_8099 are the traffic
// plane's; the API's codes stay below).
const (
	errUnknownHost        = "ERR_8001" // 404: no edge or agent endpoint serves the host
	errNoRoute            = "ERR_8002" // 404: no route of the HTTPS edge matches the path
	errIPRestricted       = "ERR_8003" // 403: refused by an ip_restriction module or the account's endpoints restriction
	errModuleNotYet       = "ERR_8004" // 501: a stored traffic policy names an action this server does not run
	errNoTunnel           = "ERR_8005" // 503: no tunnel online for the backend
	errUpstream           = "ERR_8006" // 502: the upstream could not be reached or failed
	errConfig             = "ERR_8007" // 500: the edge's or route's stored configuration does not compile
	errNoBackend          = "ERR_8008" // 503: the route has no backend module (or it is disabled)
	errUpstreamTimeout    = "ERR_8009" // 504: the upstream did not answer in time
	errMisdirected        = "ERR_8010" // 421: the Host is not the TLS server name
	errDestinationRefused = "ERR_8011" // 502: a static backend's destination is not public and not allowed
	errClientCert         = "ERR_8012" // 403: mutual TLS without a verified client certificate
	errCircuitOpen        = "ERR_8013" // 503: the route's circuit breaker is open
	errUserAgent          = "ERR_8014" // 403: refused by the route's user_agent_filter
	errNotWebSocket       = "ERR_8015" // 426: a websocket_tcp_converter route got a request that is not a WebSocket upgrade
	errAccountDisabled    = "ERR_8016" // 403: an operator disabled the account that owns the edge or endpoint
	errPolicyDenied       = "ERR_8020" // the action's status (403 by default): refused by a traffic policy's deny or restrict-ips
	errRateLimited        = "ERR_8021" // 429: a traffic policy's rate-limit tripped
	errPolicyFailed       = "ERR_8022" // 500: a traffic policy's expression or action failed to evaluate (logged)
	errPolicyClosed       = "ERR_8023" // no answer: a traffic policy's close-connection closed the connection (access log only)

	// The webhook_verification module's (ERR_8030-8039).
	errWebhookSignature    = "ERR_8030" // 403: no valid signature of the route's webhook provider
	errWebhookBodyTooLarge = "ERR_8031" // 413: a body too large to check its signature
	errWebhookUnsupported  = "ERR_8032" // 501: a provider whose signatures this server cannot check

	// The sign-in modules' (oauth, oidc, saml; ERR_8040-8049).
	errAuthDenied   = "ERR_8040" // 403: signed in, but the authentication module's rules (oauth/oidc allow rules, saml authorized_groups) do not admit the identity
	errAuthLogin    = "ERR_8041" // 400 (403 for a refused SAML answer): a sign-in could not complete (no or expired login, state mismatch, code or token refused; an invalid, expired or replayed assertion or handoff)
	errAuthProvider = "ERR_8042" // 502: the identity provider could not be reached or failed
	errAuthNoApp    = "ERR_8043" // 503: the oauth module uses a managed app this server is not configured with
	errAuthPath     = "ERR_8044" // 404: an unknown path under the reserved /_warren/auth/ of an edge with an authentication module
)

// page answers a request with a short text page naming the Warren error code, also in the
// Warren-Error-Code header.
func (e *Edge) page(w http.ResponseWriter, v *visit, status int, code, format string, args ...any) {
	v.code = code
	header, body := pageContent(status, code, fmt.Sprintf(format, args...))
	h := w.Header()
	for k, vs := range header {
		h[k] = vs
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// pageContent is the headers and body of an error page.
func pageContent(status int, code, msg string) (http.Header, string) {
	body := fmt.Sprintf("%d %s\n\n%s\n\n%s\n", status, http.StatusText(status), msg, code)
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Warren-Error-Code", code)
	return h, body
}
