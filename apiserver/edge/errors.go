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
	errModuleNotYet       = "ERR_8004" // 501: a module this server does not enforce yet is enabled
	errNoTunnel           = "ERR_8005" // 503: no tunnel online for the backend
	errUpstream           = "ERR_8006" // 502: the upstream could not be reached or failed
	errConfig             = "ERR_8007" // 500: the edge's or route's stored configuration does not compile
	errNoBackend          = "ERR_8008" // 503: the route has no backend module (or it is disabled)
	errUpstreamTimeout    = "ERR_8009" // 504: the upstream did not answer in time
	errMisdirected        = "ERR_8010" // 421: the Host is not the TLS server name
	errDestinationRefused = "ERR_8011" // 502: a static backend's destination is not public and not allowed
	errClientCert         = "ERR_8012" // 403: mutual TLS without a verified client certificate
	errAuthLogin          = "ERR_8041" // 403 (400): a sign-in refused: the identity provider's answer, or the handoff to the route, is not valid, expired or replayed
	errAuthDenied         = "ERR_8040" // 403: signed in, but not allowed by the route's authentication module (authorized_groups)
	errAuthPath           = "ERR_8044" // 404: an unknown path under the reserved /_warren/auth/ of a route with an authentication module
)

// page answers a request with a short text page naming the Warren error code, also in the
// Warren-Error-Code header.
func (e *Edge) page(w http.ResponseWriter, v *visit, status int, code, format string, args ...any) {
	v.code = code
	body := fmt.Sprintf("%d %s\n\n%s\n\n%s\n", status, http.StatusText(status), fmt.Sprintf(format, args...), code)
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Warren-Error-Code", code)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
