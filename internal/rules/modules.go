package rules

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// Edge and route modules (details.md §8, §10.1, §12). Each module function turns a module's
// request form into its response form: `enabled` defaults to true, list members never sent
// become [], and a broken rule is a *Violation whose Field is the member's path inside the
// module (e.g. "provider.github.teams"); the caller prefixes the module's own name.

// Caps the catalogue has codes for but publishes no values for; these are ours.
const (
	MaxIPPolicies             = 20   // ip_restriction.ip_policy_ids (ERR_7013)
	MaxCertificateAuthorities = 10   // mutual_tls.certificate_authority_ids (ERR_7075, §8.3)
	MaxHeaders                = 64   // entries of add, and of remove (ERR_7015)
	MaxHeaderNameBytes        = 256  // ERR_7105
	MaxHeaderValueBytes       = 4096 // ERR_7106
	MaxWebhookSecretBytes     = 4096 // ERR_7154
	MaxRouteMatchBytes        = 1024 // ERR_7135
	MaxCircuitBreakerBuckets  = 128  // ERR_7018 (§8.5)
)

// Circuit breaker defaults for members a request leaves out: the agent-side documented values
// of §8.5; the error threshold has no documented default, ours is half.
const (
	DefaultTrippedDuration          = 10
	DefaultRollingWindow            = 10
	DefaultNumBuckets               = 10
	DefaultVolumeThreshold          = 20
	DefaultErrorThresholdPercentage = 0.5
)

// TLS termination values (details.md §8.2, §10.2).
var (
	TLSVersions  = []string{"1.0", "1.1", "1.2", "1.3"}
	TerminateAts = []string{"edge", "upstream"}
)

// Route match types (details.md §10.2).
var MatchTypes = []string{"exact_path", "path_prefix"}

// WebhookProviders are the 65 providers of the edge-module era (details.md §10.1). The four
// that only the later traffic-policy list adds (alchemy, jira, linear, orb) are unconfirmed
// for the module and left out.
var WebhookProviders = []string{
	"aftership", "airship", "sns", "autodesk", "bitbucket", "bolt", "box", "brex", "buildkite",
	"calendly", "castle", "chargify", "circleci", "clearbit", "clerk", "coinbase", "contentful",
	"docusign", "dropbox", "facebook_graph_api", "facebook_messenger", "frameio", "github",
	"gitlab", "go1", "heroku", "hostedhooks", "hubspot", "graphcms", "instagram", "intercom",
	"launch_darkly", "mailchimp", "mailgun", "microsoft_teams", "modern_treasury", "mongodb",
	"mux", "orbit", "pagerduty", "pinwheel", "plivo", "pusher", "sendgrid", "sentry", "shopify",
	"signal_sciences", "slack", "sonatype", "square", "stripe", "svix", "terraform", "tiktok",
	"trendmicro_conformity", "twilio", "twitter", "typeform", "vmware", "webex", "whatsapp",
	"worldline", "xero", "zendesk", "zoom",
}

// SecretlessWebhookProvider is the only provider that takes no secret (§10.1).
const SecretlessWebhookProvider = "sns"

// enabled applies the module default of §8.1.
func enabled(b *bool) bool { return b == nil || *b }

// list returns l, or [] for a list never sent (§8.1): a module's lists are never null.
func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return slices.Clone(l)
}

// uint32Value refuses what does not fit the API's uint32 members (ERR_215).
func uint32Value(field string, v int64) error {
	if v < 0 || v > math.MaxUint32 {
		return violation("ERR_215", field, "%s must be a whole number from 0 to %d; got %d.", field, uint32(math.MaxUint32), v)
	}
	return nil
}

// Toggle is compression and websocket_tcp_converter: nothing but `enabled`.
func Toggle(req *api.ToggleModuleRequest) *api.ToggleModule {
	return &api.ToggleModule{Enabled: enabled(req.Enabled)}
}

// TLSTermination checks a tls_termination module of an "https" or "tls" edge (§8.2). An HTTPS
// edge terminates at the edge, always: terminate_at may not be sent (ERR_7109). A TLS edge
// terminates at "edge" (the default) or "upstream". min_version is one of TLSVersions
// (ERR_219) and null with upstream (ERR_7062: there is no TLS to configure). An unspecified
// min_version stays null in the response: the service then uses 1.2, and echoing null keeps
// what the caller sent and what it reads back the same.
func TLSTermination(req *api.TLSTerminationModuleRequest, edge string) (*api.TLSTerminationModule, error) {
	if edge != "https" && edge != "tls" {
		return nil, fmt.Errorf("rules: tls_termination on an unknown edge kind %q", edge)
	}
	out := &api.TLSTerminationModule{Enabled: enabled(req.Enabled), TerminateAt: "edge"}
	switch {
	case edge == "https" && req.TerminateAt != nil:
		return nil, violation("ERR_7109", "terminate_at", "terminate_at may not be set on an HTTPS edge: HTTPS edges always terminate TLS at the edge.")
	case req.TerminateAt != nil:
		if !slices.Contains(TerminateAts, *req.TerminateAt) {
			return nil, violation("ERR_215", "terminate_at", "Invalid terminate_at %s; valid values are %s.", Quote(*req.TerminateAt), strings.Join(TerminateAts, ", "))
		}
		out.TerminateAt = *req.TerminateAt
	}
	if req.MinVersion != nil {
		if out.TerminateAt == "upstream" {
			return nil, violation("ERR_7062", "min_version", "min_version must be null when terminate_at is 'upstream': TLS is not terminated by the edge.")
		}
		if !slices.Contains(TLSVersions, *req.MinVersion) {
			return nil, violation("ERR_219", "min_version", "The TLS version %s is not supported; supported versions are %s.", Quote(*req.MinVersion), strings.Join(TLSVersions, ", "))
		}
		v := *req.MinVersion
		out.MinVersion = &v
	}
	return out, nil
}

// CircuitBreaker checks a circuit_breaker module (§8.5). Omitted members take the defaults
// above; a member sent as 0 is checked as sent (tripped_duration, rolling_window and
// num_buckets must be > 0).
func CircuitBreaker(req *api.CircuitBreakerModuleRequest) (*api.CircuitBreakerModule, error) {
	pick := func(p *int64, def int64) int64 {
		if p == nil {
			return def
		}
		return *p
	}
	out := &api.CircuitBreakerModule{
		Enabled:                  enabled(req.Enabled),
		TrippedDuration:          pick(req.TrippedDuration, DefaultTrippedDuration),
		RollingWindow:            pick(req.RollingWindow, DefaultRollingWindow),
		NumBuckets:               pick(req.NumBuckets, DefaultNumBuckets),
		VolumeThreshold:          pick(req.VolumeThreshold, DefaultVolumeThreshold),
		ErrorThresholdPercentage: DefaultErrorThresholdPercentage,
	}
	if req.ErrorThresholdPercentage != nil {
		out.ErrorThresholdPercentage = *req.ErrorThresholdPercentage
	}
	switch {
	case out.TrippedDuration <= 0:
		return nil, violation("ERR_7016", "tripped_duration", "tripped_duration must be greater than 0; got %d.", out.TrippedDuration)
	case out.RollingWindow <= 0:
		return nil, violation("ERR_7017", "rolling_window", "rolling_window must be greater than 0; got %d.", out.RollingWindow)
	case out.NumBuckets <= 0 || out.NumBuckets > MaxCircuitBreakerBuckets:
		return nil, violation("ERR_7018", "num_buckets", "num_buckets must be from 1 to %d; got %d.", MaxCircuitBreakerBuckets, out.NumBuckets)
	}
	for _, m := range []struct {
		field string
		v     int64
	}{{"tripped_duration", out.TrippedDuration}, {"rolling_window", out.RollingWindow}, {"volume_threshold", out.VolumeThreshold}} {
		if err := uint32Value(m.field, m.v); err != nil {
			return nil, err
		}
	}
	// The negated form also refuses NaN.
	if !(out.ErrorThresholdPercentage >= 0 && out.ErrorThresholdPercentage <= 1) {
		return nil, violation("ERR_7011", "error_threshold_percentage", "error_threshold_percentage must be from 0.0 to 1.0 (a fraction, not a percentage); got %v.", out.ErrorThresholdPercentage)
	}
	return out, nil
}

// Headers checks a request_headers or response_headers module (§8.7): header names and values
// valid HTTP (ERR_7023/7024) within their caps (ERR_7105/7106), at most MaxHeaders entries in
// add and in remove (ERR_7015), no name added twice in different case (ERR_7069), no name
// removed twice (ERR_215). Keys of add are lowercased; remove is kept as sent, [] by default.
func Headers(req *api.HeadersModuleRequest) (*api.HeadersModule, error) {
	if len(req.Add) > MaxHeaders {
		return nil, violation("ERR_7015", "add", "At most %d headers may be added; got %d.", MaxHeaders, len(req.Add))
	}
	if len(req.Remove) > MaxHeaders {
		return nil, violation("ERR_7015", "remove", "At most %d headers may be removed; got %d.", MaxHeaders, len(req.Remove))
	}
	out := &api.HeadersModule{Enabled: enabled(req.Enabled), Add: map[string]string{}, Remove: list(req.Remove)}
	// Sorted, so that the same request always gives the same error.
	names := make([]string, 0, len(req.Add))
	for name := range req.Add {
		names = append(names, name)
	}
	slices.Sort(names)
	seen := map[string]string{}
	for _, name := range names {
		value := req.Add[name]
		if err := headerName("add", name); err != nil {
			return nil, err
		}
		if len(value) > MaxHeaderValueBytes {
			return nil, violation("ERR_7106", "add", "The value of header %s is %d bytes long; the maximum is %d bytes.", Quote(name), len(value), MaxHeaderValueBytes)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, violation("ERR_7024", "add", "The value %s of header %s is not a valid HTTP header value.", Quote(value), Quote(name))
		}
		lower := strings.ToLower(name)
		if prev, dup := seen[lower]; dup {
			return nil, violation("ERR_7069", "add", "The header %s is added twice, as %s and %s; header names are case-insensitive.", Quote(lower), Quote(prev), Quote(name))
		}
		seen[lower] = name
		out.Add[lower] = value
	}
	removed := map[string]string{}
	for _, name := range req.Remove {
		if err := headerName("remove", name); err != nil {
			return nil, err
		}
		lower := strings.ToLower(name)
		if prev, dup := removed[lower]; dup {
			return nil, violation("ERR_215", "remove", "The header %s is removed twice (as %s and %s).", Quote(lower), Quote(prev), Quote(name))
		}
		removed[lower] = name
	}
	return out, nil
}

func headerName(field, name string) error {
	if len(name) > MaxHeaderNameBytes {
		return violation("ERR_7105", field, "The header name %s is %d bytes long; the maximum is %d bytes.", Quote(name), len(name), MaxHeaderNameBytes)
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return violation("ERR_7023", field, "%s is not a valid HTTP header name.", Quote(name))
	}
	return nil
}

// WebhookVerification checks a webhook_verification module (§8.8, §10.1): the provider is
// required (ERR_7029) and one of WebhookProviders (ERR_7030), matched case-insensitively and
// kept as sent. sns takes no secret (ERR_7026), every other provider needs one (ERR_7027),
// at most MaxWebhookSecretBytes long (ERR_7154), and of the shape the provider's scheme
// needs (ERR_7107: SendGrid's public key, VMware's "username::password", a base64 Teams
// token, a whsec_ Svix secret). An empty secret counts as none. Messages never repeat the
// secret.
func WebhookVerification(req *api.WebhookVerificationModuleRequest) (*api.WebhookVerificationModule, error) {
	if req.Provider == nil || *req.Provider == "" {
		return nil, violation("ERR_7029", "provider", "The webhook verification provider is missing.")
	}
	provider := *req.Provider
	if !slices.Contains(WebhookProviders, strings.ToLower(provider)) {
		return nil, violation("ERR_7030", "provider", "The webhook verification provider %s is not supported; supported providers are %s.", Quote(provider), strings.Join(WebhookProviders, ", "))
	}
	secret := ""
	if req.Secret != nil {
		secret = *req.Secret
	}
	switch {
	case strings.EqualFold(provider, SecretlessWebhookProvider) && secret != "":
		return nil, violation("ERR_7026", "secret", "The %s provider takes no secret.", SecretlessWebhookProvider)
	case !strings.EqualFold(provider, SecretlessWebhookProvider) && secret == "":
		return nil, violation("ERR_7027", "secret", "The webhook verification provider %s requires a secret.", Quote(provider))
	case len(secret) > MaxWebhookSecretBytes:
		return nil, violation("ERR_7154", "secret", "The webhook verification secret is %d bytes long; the maximum is %d bytes.", len(secret), MaxWebhookSecretBytes)
	case secret != "":
		if err := webhook.CheckSecret(provider, secret); err != nil {
			return nil, violation("ERR_7107", "secret", "The secret cannot verify %s webhooks: %v.", Quote(provider), err)
		}
	}
	return &api.WebhookVerificationModule{Enabled: enabled(req.Enabled), Provider: provider, Secret: secret}, nil
}

// UserAgentFilter checks a user_agent_filter module (§8.9): every allow and deny pattern must
// compile as an RE2 regular expression (ERR_2090, naming the pattern).
func UserAgentFilter(req *api.UserAgentFilterModuleRequest) (*api.UserAgentFilterModule, error) {
	for _, l := range []struct {
		field    string
		patterns []string
	}{{"allow", req.Allow}, {"deny", req.Deny}} {
		for _, p := range l.patterns {
			if _, err := regexp.Compile(p); err != nil {
				return nil, violation("ERR_2090", l.field, "The user agent pattern %s is not a valid regular expression (RE2 syntax): %s.", Quote(p), regexpReason(err))
			}
		}
	}
	return &api.UserAgentFilterModule{Enabled: enabled(req.Enabled), Allow: list(req.Allow), Deny: list(req.Deny)}, nil
}

// regexpReason is what is wrong with a pattern, without repeating the pattern (the message
// already quotes it, clipped).
func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s in %s", se.Code, Quote(se.Expr))
	}
	return Clip(err.Error())
}

// IPPolicyIDs checks the IP policy list of an ip_restriction module (§8.4): at least one
// (ERR_7025), at most MaxIPPolicies (ERR_7013), none twice (ERR_215). Whether each exists is
// the server's check (ERR_7007).
func IPPolicyIDs(ids []string) error {
	if len(ids) == 0 {
		return violation("ERR_7025", "ip_policy_ids", "An ip_restriction module needs at least one IP policy.")
	}
	if len(ids) > MaxIPPolicies {
		return violation("ERR_7013", "ip_policy_ids", "An ip_restriction module has at most %d IP policies; got %d.", MaxIPPolicies, len(ids))
	}
	return noDuplicates("ip_policy_ids", "IP policy", ids)
}

// CertificateAuthorityIDs checks the CA list of a mutual_tls module (§8.3): at most
// MaxCertificateAuthorities (ERR_7075), at least one (ERR_215: without a CA no client
// certificate could be accepted; the catalogue has no code of its own), none twice
// (ERR_215). Whether each exists is the server's check (ERR_7072).
func CertificateAuthorityIDs(ids []string) error {
	if len(ids) == 0 {
		return violation("ERR_215", "certificate_authority_ids", "A mutual_tls module needs at least one certificate authority.")
	}
	if len(ids) > MaxCertificateAuthorities {
		return violation("ERR_7075", "certificate_authority_ids", "A mutual_tls module has at most %d certificate authorities; got %d.", MaxCertificateAuthorities, len(ids))
	}
	return noDuplicates("certificate_authority_ids", "certificate authority", ids)
}

func noDuplicates(field, what string, ids []string) error {
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return violation("ERR_215", field, "The %s %s is listed more than once.", what, Quote(id))
		}
	}
	return nil
}

// RouteMatch checks a route's match_type (ERR_7130) and match (§12): required (ERR_7123), a
// path starting with "/" without spaces or control characters (ERR_7131; host forms are
// unconfirmed and refused), at most MaxRouteMatchBytes (ERR_7135).
func RouteMatch(matchType, match string) error {
	if !slices.Contains(MatchTypes, matchType) {
		return violation("ERR_7130", "match_type", "Invalid match_type %s; valid values are %s.", Quote(matchType), strings.Join(MatchTypes, ", "))
	}
	if match == "" {
		return violation("ERR_7123", "match", "A route needs a match.")
	}
	if len(match) > MaxRouteMatchBytes {
		return violation("ERR_7135", "match", "The match is %d bytes long; the maximum is %d bytes.", len(match), MaxRouteMatchBytes)
	}
	if !strings.HasPrefix(match, "/") || strings.ContainsFunc(match, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return violation("ERR_7131", "match", "The match %s must be a path of the form /path, without spaces.", Quote(match))
	}
	return Identifier("ERR_7131", "match", match)
}

// Hostport checks an edge hostport `hostname:port` (ERR_7104) with a port from 1 to 65535
// (ERR_7112), and returns the host lowercased. A wildcard host (`*.example.com`) is a
// hostname here: it names a wildcard reserved domain.
func Hostport(s string) (host string, port int, err error) {
	bad := func() error {
		return violation("ERR_7104", "hostports", "The hostport %s must be hostname:port, e.g. example.com:443.", Quote(s))
	}
	if err := Identifier("ERR_7104", "hostports", s); err != nil {
		return "", 0, err
	}
	h, p, splitErr := net.SplitHostPort(s)
	if splitErr != nil || !hostname(h, true) || p == "" || strings.Trim(p, "0123456789") != "" {
		return "", 0, bad()
	}
	n, convErr := strconv.Atoi(p)
	if convErr != nil || n < 1 || n > 65535 {
		return "", 0, violation("ERR_7112", "hostports", "The port of %s must be from 1 to 65535.", Quote(s))
	}
	return strings.ToLower(h), n, nil
}
