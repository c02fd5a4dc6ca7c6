package trafficpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// ActionTypes are the action types of the public traffic policy language: those in
// actionTable run; the others are known, so that a misspelling is told apart, but refused
// (ErrUnsupported).
var ActionTypes = []string{
	"add-headers", "basic-auth", "circuit-breaker", "close-connection", "compress-response",
	"custom-response", "deny", "forward-internal", "http-request", "jwt-validation", "log",
	"oauth", "openid-connect", "owasp-crs-request", "owasp-crs-response", "rate-limit",
	"redirect", "remove-headers", "restrict-ips", "set-vars", "terminate-tls", "url-rewrite",
	"verify-webhook",
}

// Action is an action of a rule, its configuration parsed.
type Action interface {
	Type() string
	// run applies the action to x; a Stop ends the phase.
	run(x *Exchange) (*Stop, error)
}

// actionSpec is an action type this server runs: the phases it means something in, and
// its configuration's parser (the configuration as JSON, "{}" when there is none).
type actionSpec struct {
	phases []string
	parse  func(phase string, config []byte) (Action, error)
}

var (
	connAndRequest = []string{PhaseTCPConnect, PhaseHTTPRequest}
	httpPhases     = []string{PhaseHTTPRequest, PhaseHTTPResponse}
	allPhases      = Phases
)

var actionTable = map[string]actionSpec{
	"deny":              {allPhases, parseDeny},
	"restrict-ips":      {connAndRequest, parseRestrictIPs},
	"close-connection":  {connAndRequest, parseCloseConnection},
	"log":               {allPhases, parseLog},
	"custom-response":   {httpPhases, parseCustomResponse},
	"add-headers":       {httpPhases, parseAddHeaders},
	"remove-headers":    {httpPhases, parseRemoveHeaders},
	"redirect":          {httpPhases, parseRedirect},
	"url-rewrite":       {[]string{PhaseHTTPRequest}, parseURLRewrite},
	"rate-limit":        {[]string{PhaseHTTPRequest}, parseRateLimit},
	"compress-response": {[]string{PhaseHTTPResponse}, parseCompressResponse},
}

// ErrUnsupported is an action type of the language that this server does not run.
var ErrUnsupported = errors.New("this server does not run this action type")

// ActionPhases are the phases an action type runs in (nil for one not run here).
func ActionPhases(typ string) []string { return actionTable[typ].phases }

// ParseAction parses the configuration (nil, or a mapping decoded from JSON or YAML) of an
// action of type typ in phase. An unknown type is not expected here (the caller checks
// ActionTypes); a known one this server does not run is ErrUnsupported.
func ParseAction(phase, typ string, config any) (Action, error) {
	spec, ok := actionTable[typ]
	if !ok {
		return nil, ErrUnsupported
	}
	if !slices.Contains(spec.phases, phase) {
		return nil, fmt.Errorf("%s does not run in %s; it runs in %s", typ, phase, strings.Join(spec.phases, ", "))
	}
	raw := []byte("{}")
	if config != nil {
		if _, isMap := config.(map[string]any); !isMap {
			return nil, errors.New("config must be a mapping")
		}
		var err error
		if raw, err = json.Marshal(config); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	return spec.parse(phase, raw)
}

// decode reads a configuration into v, refusing unknown fields.
func decode(config []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("config field %s must be of type %s", te.Field, te.Type)
		}
		return fmt.Errorf("config: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// statusCode checks an optional status code of a configuration in [lo, hi]; def when unset.
func statusCode(field string, v *int, lo, hi, def int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, fmt.Errorf("%s must be from %d to %d; got %d", field, lo, hi, *v)
	}
	return *v, nil
}

// headerMapConfig checks the header names and values of a configuration's map.
func headerMapConfig(field string, h map[string]string, required bool) (http.Header, error) {
	if required && len(h) == 0 {
		return nil, fmt.Errorf("%s needs at least one header", field)
	}
	out := http.Header{}
	for k, v := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("%s: %q is not a valid header name", field, k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, fmt.Errorf("%s: the value of %s is not a valid header value", field, k)
		}
		out.Add(k, v)
	}
	return out, nil
}

// deny refuses: an HTTP visitor gets an error page with status_code (403 by default); a
// TCP or TLS connection is closed.
type deny struct{ status int }

func parseDeny(phase string, config []byte) (Action, error) {
	var c struct {
		StatusCode *int `json:"status_code"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	if phase == PhaseTCPConnect && c.StatusCode != nil {
		return nil, errors.New("status_code has no meaning in on_tcp_connect: the connection is closed")
	}
	status, err := statusCode("status_code", c.StatusCode, 400, 599, http.StatusForbidden)
	return deny{status}, err
}

func (deny) Type() string { return "deny" }
func (d deny) run(*Exchange) (*Stop, error) {
	return &Stop{Kind: Refuse, Status: d.status, Reason: "denied"}, nil
}

// restrictIPs refuses a client whose address is in deny, or not in allow when allow is set
// (deny wins); 403 for an HTTP visitor.
type restrictIPs struct{ allow, deny []netip.Prefix }

func parseRestrictIPs(_ string, config []byte) (Action, error) {
	var c struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	if len(c.Allow)+len(c.Deny) == 0 {
		return nil, errors.New("restrict-ips needs allow or deny CIDR ranges")
	}
	var a restrictIPs
	for _, l := range []struct {
		field string
		in    []string
		out   *[]netip.Prefix
	}{{"allow", c.Allow, &a.allow}, {"deny", c.Deny, &a.deny}} {
		for _, s := range l.in {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a CIDR range", l.field, s)
			}
			*l.out = append(*l.out, p.Masked())
		}
	}
	return a, nil
}

func (restrictIPs) Type() string { return "restrict-ips" }
func (a restrictIPs) run(x *Exchange) (*Stop, error) {
	ip := x.Conn.Client.Addr().Unmap()
	in := func(ps []netip.Prefix) bool {
		return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(ip) })
	}
	if in(a.deny) || len(a.allow) > 0 && !in(a.allow) {
		return &Stop{Kind: Refuse, Status: http.StatusForbidden, Reason: "the address " + ip.String() + " is not allowed"}, nil
	}
	return nil, nil
}

// closeConnection closes the connection without an answer.
type closeConnection struct{}

func parseCloseConnection(_ string, config []byte) (Action, error) {
	return closeConnection{}, decode(config, &struct{}{})
}

func (closeConnection) Type() string                 { return "close-connection" }
func (closeConnection) run(*Exchange) (*Stop, error) { return &Stop{Kind: Close}, nil }

// logAction adds its metadata (without any: the rule that ran it, as "rule") to the edge's
// log line of the request or connection.
type logAction struct{ metadata map[string]any }

func parseLog(_ string, config []byte) (Action, error) {
	var c struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	return logAction{c.Metadata}, nil
}

func (logAction) Type() string { return "log" }
func (l logAction) run(x *Exchange) (*Stop, error) {
	if x.Log == nil {
		x.Log = map[string]any{}
	}
	if len(l.metadata) == 0 {
		x.Log["rule"] = x.rule
	}
	for k, v := range l.metadata {
		x.Log[k] = v
	}
	return nil, nil
}

// customResponse answers with status_code, headers and body; in on_http_response it
// replaces the upstream's response.
type customResponse struct {
	status int
	header http.Header
	body   string
}

func parseCustomResponse(_ string, config []byte) (Action, error) {
	var c struct {
		StatusCode *int              `json:"status_code"`
		Body       string            `json:"body"`
		Headers    map[string]string `json:"headers"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	if c.StatusCode == nil {
		return nil, errors.New("custom-response needs a status_code")
	}
	status, err := statusCode("status_code", c.StatusCode, 200, 599, 0)
	if err != nil {
		return nil, err
	}
	h, err := headerMapConfig("headers", c.Headers, false)
	return customResponse{status, h, c.Body}, err
}

func (customResponse) Type() string { return "custom-response" }
func (a customResponse) run(*Exchange) (*Stop, error) {
	return &Stop{Kind: Respond, Status: a.status, Header: a.header.Clone(), Body: a.body}, nil
}

// addHeaders adds (appends) headers to the request the upstream receives, or to the
// response the visitor receives.
type addHeaders struct{ header http.Header }

func parseAddHeaders(_ string, config []byte) (Action, error) {
	var c struct {
		Headers map[string]string `json:"headers"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	h, err := headerMapConfig("headers", c.Headers, true)
	return addHeaders{h}, err
}

func (addHeaders) Type() string { return "add-headers" }
func (a addHeaders) run(x *Exchange) (*Stop, error) {
	h := x.headers()
	for k, vs := range a.header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	x.changed()
	return nil, nil
}

// headers are the headers the HTTP phase running changes.
func (x *Exchange) headers() http.Header {
	if x.Res != nil {
		return x.Res.Header
	}
	return x.Req.Header
}

// removeHeaders removes headers (every value) from the request or the response.
type removeHeaders struct{ names []string }

func parseRemoveHeaders(_ string, config []byte) (Action, error) {
	var c struct {
		Headers []string `json:"headers"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	if len(c.Headers) == 0 {
		return nil, errors.New("remove-headers needs at least one header name")
	}
	for _, n := range c.Headers {
		if !httpguts.ValidHeaderFieldName(n) {
			return nil, fmt.Errorf("headers: %q is not a valid header name", n)
		}
	}
	return removeHeaders{c.Headers}, nil
}

func (removeHeaders) Type() string { return "remove-headers" }
func (a removeHeaders) run(x *Exchange) (*Stop, error) {
	h := x.headers()
	for _, n := range a.names {
		h.Del(n)
	}
	x.changed()
	return nil, nil
}

// urlPattern is the from/to of redirect and url-rewrite, over the request's full URL
// (scheme://host/path?query): the first match of from (RE2) is replaced by to, where $1,
// ${name} … are from's groups; without from, the whole URL is replaced. A URL from does not
// match is left alone (the action does nothing).
type urlPattern struct {
	from *regexp.Regexp
	to   string
}

func parseURLPattern(from *string, to string) (urlPattern, error) {
	if to == "" {
		return urlPattern{}, errors.New("to is required")
	}
	p := urlPattern{to: to}
	if from != nil {
		re, err := regexp.Compile(*from)
		if err != nil {
			return p, fmt.Errorf("from is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		p.from = re
	}
	return p, nil
}

// apply returns the URL rewritten, and whether from matched.
func (p urlPattern) apply(url string) (string, bool) {
	if p.from == nil {
		return p.to, true
	}
	loc := p.from.FindStringSubmatchIndex(url)
	if loc == nil {
		return url, false
	}
	return url[:loc[0]] + string(p.from.ExpandString(nil, p.to, url, loc)) + url[loc[1]:], true
}

// requestURL is the full URL of the request of x, as redirect and url-rewrite match it.
func (x *Exchange) requestURL() string {
	r := x.Req
	u := *r.URL
	u.Scheme, u.Host = x.Conn.Protocol, r.Host
	return u.String()
}

// redirect answers with a redirect (status_code, 302 by default) to the URL rewritten.
type redirect struct {
	urlPattern
	status int
	header http.Header
}

func parseRedirect(_ string, config []byte) (Action, error) {
	var c struct {
		From       *string           `json:"from"`
		To         string            `json:"to"`
		StatusCode *int              `json:"status_code"`
		Headers    map[string]string `json:"headers"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	p, err := parseURLPattern(c.From, c.To)
	if err != nil {
		return nil, err
	}
	status, err := statusCode("status_code", c.StatusCode, 300, 399, http.StatusFound)
	if err != nil {
		return nil, err
	}
	h, err := headerMapConfig("headers", c.Headers, false)
	return redirect{p, status, h}, err
}

func (redirect) Type() string { return "redirect" }
func (a redirect) run(x *Exchange) (*Stop, error) {
	to, ok := a.apply(x.requestURL())
	if !ok {
		return nil, nil
	}
	h := a.header.Clone()
	h.Set("Location", to)
	return &Stop{Kind: Respond, Status: a.status, Header: h}, nil
}

// urlRewrite changes the path and query the upstream receives: the rewritten URL must keep
// the request's scheme and host (an error otherwise).
type urlRewrite struct{ urlPattern }

func parseURLRewrite(_ string, config []byte) (Action, error) {
	var c struct {
		From *string `json:"from"`
		To   string  `json:"to"`
	}
	if err := decode(config, &c); err != nil {
		return nil, err
	}
	p, err := parseURLPattern(c.From, c.To)
	return urlRewrite{p}, err
}

func (urlRewrite) Type() string { return "url-rewrite" }
func (a urlRewrite) run(x *Exchange) (*Stop, error) {
	before := x.requestURL()
	after, ok := a.apply(before)
	if !ok {
		return nil, nil
	}
	u, err := x.Req.URL.Parse(after)
	if err != nil {
		return nil, fmt.Errorf("the rewritten URL %q does not parse: %w", after, err)
	}
	if u.Scheme != x.Conn.Protocol || !strings.EqualFold(u.Host, x.Req.Host) {
		return nil, fmt.Errorf("the rewritten URL %q changes the scheme or host; url-rewrite changes the path and query only", after)
	}
	x.Req.URL.Path, x.Req.URL.RawPath, x.Req.URL.RawQuery = u.Path, u.RawPath, u.RawQuery
	x.Req.RequestURI = x.Req.URL.RequestURI()
	x.changed()
	return nil, nil
}
