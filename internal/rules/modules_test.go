package rules

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func ptr[T any](v T) *T { return &v }

// field is the member path of a Violation.
func field(err error) string {
	var v *Violation
	if errors.As(err, &v) {
		return v.Field
	}
	return ""
}

// want checks a rule's result: no error and the response, or the code and field.
func want[T any](t *testing.T, name string, got T, err error, wantCode, wantField string, wantOut T) {
	t.Helper()
	if code(err) != wantCode || (err != nil) != (wantCode != "") {
		t.Errorf("%s: error %v (code %q), want code %q", name, err, code(err), wantCode)
		return
	}
	if wantCode != "" {
		if field(err) != wantField {
			t.Errorf("%s: field %q, want %q", name, field(err), wantField)
		}
		return
	}
	if !reflect.DeepEqual(got, wantOut) {
		t.Errorf("%s: got %#v, want %#v", name, got, wantOut)
	}
}

func TestToggle(t *testing.T) {
	if got := Toggle(&api.ToggleModuleRequest{}); !got.Enabled {
		t.Errorf("omitted enabled = %v, want true", got.Enabled)
	}
	if got := Toggle(&api.ToggleModuleRequest{Enabled: ptr(false)}); got.Enabled {
		t.Errorf("enabled false = %v", got.Enabled)
	}
}

func TestTLSTermination(t *testing.T) {
	for _, tt := range []struct {
		name      string
		req       api.TLSTerminationModuleRequest
		edge      string
		code, fld string
		out       *api.TLSTerminationModule
	}{
		{"https defaults", api.TLSTerminationModuleRequest{}, "https", "", "", &api.TLSTerminationModule{Enabled: true, TerminateAt: "edge"}},
		{"https min version", api.TLSTerminationModuleRequest{Enabled: ptr(false), MinVersion: ptr("1.3")}, "https", "", "", &api.TLSTerminationModule{TerminateAt: "edge", MinVersion: ptr("1.3")}},
		{"https terminate_at", api.TLSTerminationModuleRequest{TerminateAt: ptr("edge")}, "https", "ERR_7109", "terminate_at", nil},
		{"tls defaults", api.TLSTerminationModuleRequest{}, "tls", "", "", &api.TLSTerminationModule{Enabled: true, TerminateAt: "edge"}},
		{"tls upstream", api.TLSTerminationModuleRequest{TerminateAt: ptr("upstream")}, "tls", "", "", &api.TLSTerminationModule{Enabled: true, TerminateAt: "upstream"}},
		{"tls edge 1.0", api.TLSTerminationModuleRequest{TerminateAt: ptr("edge"), MinVersion: ptr("1.0")}, "tls", "", "", &api.TLSTerminationModule{Enabled: true, TerminateAt: "edge", MinVersion: ptr("1.0")}},
		{"tls agent", api.TLSTerminationModuleRequest{TerminateAt: ptr("agent")}, "tls", "ERR_215", "terminate_at", nil},
		{"tls upstream min version", api.TLSTerminationModuleRequest{TerminateAt: ptr("upstream"), MinVersion: ptr("1.2")}, "tls", "ERR_7062", "min_version", nil},
		{"bad version", api.TLSTerminationModuleRequest{MinVersion: ptr("1.4")}, "tls", "ERR_219", "min_version", nil},
		{"bad version https", api.TLSTerminationModuleRequest{MinVersion: ptr("TLS1.2")}, "https", "ERR_219", "min_version", nil},
	} {
		got, err := TLSTermination(&tt.req, tt.edge)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
	if _, err := TLSTermination(&api.TLSTerminationModuleRequest{}, "tcp"); err == nil || code(err) != "" {
		t.Errorf("tcp edge: %v, want a programming error", err)
	}
}

func TestCircuitBreaker(t *testing.T) {
	for _, tt := range []struct {
		name      string
		req       api.CircuitBreakerModuleRequest
		code, fld string
		out       *api.CircuitBreakerModule
	}{
		{"defaults", api.CircuitBreakerModuleRequest{}, "", "", &api.CircuitBreakerModule{Enabled: true, TrippedDuration: 10, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 20, ErrorThresholdPercentage: 0.5}},
		{"all given", api.CircuitBreakerModuleRequest{Enabled: ptr(false), TrippedDuration: ptr[int64](5), RollingWindow: ptr[int64](30), NumBuckets: ptr[int64](128), VolumeThreshold: ptr[int64](0), ErrorThresholdPercentage: ptr(1.0)},
			"", "", &api.CircuitBreakerModule{TrippedDuration: 5, RollingWindow: 30, NumBuckets: 128, ErrorThresholdPercentage: 1}},
		{"threshold 0", api.CircuitBreakerModuleRequest{ErrorThresholdPercentage: ptr(0.0)}, "", "", &api.CircuitBreakerModule{Enabled: true, TrippedDuration: 10, RollingWindow: 10, NumBuckets: 10, VolumeThreshold: 20}},
		{"tripped 0", api.CircuitBreakerModuleRequest{TrippedDuration: ptr[int64](0)}, "ERR_7016", "tripped_duration", nil},
		{"window negative", api.CircuitBreakerModuleRequest{RollingWindow: ptr[int64](-1)}, "ERR_7017", "rolling_window", nil},
		{"buckets 0", api.CircuitBreakerModuleRequest{NumBuckets: ptr[int64](0)}, "ERR_7018", "num_buckets", nil},
		{"buckets 129", api.CircuitBreakerModuleRequest{NumBuckets: ptr[int64](129)}, "ERR_7018", "num_buckets", nil},
		{"volume negative", api.CircuitBreakerModuleRequest{VolumeThreshold: ptr[int64](-1)}, "ERR_215", "volume_threshold", nil},
		{"tripped over uint32", api.CircuitBreakerModuleRequest{TrippedDuration: ptr[int64](math.MaxUint32 + 1)}, "ERR_215", "tripped_duration", nil},
		{"threshold percent", api.CircuitBreakerModuleRequest{ErrorThresholdPercentage: ptr(50.0)}, "ERR_7011", "error_threshold_percentage", nil},
		{"threshold negative", api.CircuitBreakerModuleRequest{ErrorThresholdPercentage: ptr(-0.1)}, "ERR_7011", "error_threshold_percentage", nil},
		{"threshold NaN", api.CircuitBreakerModuleRequest{ErrorThresholdPercentage: ptr(math.NaN())}, "ERR_7011", "error_threshold_percentage", nil},
	} {
		got, err := CircuitBreaker(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
}

func TestHeaders(t *testing.T) {
	many := map[string]string{}
	for i := range MaxHeaders + 1 {
		many["x-h"+strings.Repeat("a", i)] = "v"
	}
	for _, tt := range []struct {
		name      string
		req       api.HeadersModuleRequest
		code, fld string
		out       *api.HeadersModule
	}{
		{"empty", api.HeadersModuleRequest{}, "", "", &api.HeadersModule{Enabled: true, Add: map[string]string{}, Remove: []string{}}},
		{"lowercased", api.HeadersModuleRequest{Enabled: ptr(false), Add: map[string]string{"X-Env": "prod", "x-empty": ""}, Remove: []string{"Server"}},
			"", "", &api.HeadersModule{Add: map[string]string{"x-env": "prod", "x-empty": ""}, Remove: []string{"Server"}}},
		{"bad name", api.HeadersModuleRequest{Add: map[string]string{"bad name": "x"}}, "ERR_7023", "add", nil},
		{"empty name", api.HeadersModuleRequest{Add: map[string]string{"": "x"}}, "ERR_7023", "add", nil},
		{"bad remove name", api.HeadersModuleRequest{Remove: []string{"a:b"}}, "ERR_7023", "remove", nil},
		{"bad value", api.HeadersModuleRequest{Add: map[string]string{"x-a": "a\r\nb: c"}}, "ERR_7024", "add", nil},
		{"case duplicate", api.HeadersModuleRequest{Add: map[string]string{"X-A": "1", "x-a": "2"}}, "ERR_7069", "add", nil},
		{"removed twice", api.HeadersModuleRequest{Remove: []string{"X-A", "x-a"}}, "ERR_215", "remove", nil},
		{"too many added", api.HeadersModuleRequest{Add: many}, "ERR_7015", "add", nil},
		{"too many removed", api.HeadersModuleRequest{Remove: make([]string, MaxHeaders+1)}, "ERR_7015", "remove", nil},
		{"name too long", api.HeadersModuleRequest{Add: map[string]string{strings.Repeat("a", MaxHeaderNameBytes+1): "x"}}, "ERR_7105", "add", nil},
		{"value too long", api.HeadersModuleRequest{Add: map[string]string{"x-a": strings.Repeat("a", MaxHeaderValueBytes+1)}}, "ERR_7106", "add", nil},
	} {
		got, err := Headers(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
}

func TestWebhookVerification(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tt := range []struct {
		name      string
		req       api.WebhookVerificationModuleRequest
		code, fld string
		out       *api.WebhookVerificationModule
	}{
		{"echoed as given", api.WebhookVerificationModuleRequest{Provider: ptr("TWILIO"), Secret: ptr(secret)}, "", "", &api.WebhookVerificationModule{Enabled: true, Provider: "TWILIO", Secret: secret}},
		{"sns", api.WebhookVerificationModuleRequest{Enabled: ptr(false), Provider: ptr("sns")}, "", "", &api.WebhookVerificationModule{Provider: "sns"}},
		{"sns empty secret", api.WebhookVerificationModuleRequest{Provider: ptr("SNS"), Secret: ptr("")}, "", "", &api.WebhookVerificationModule{Enabled: true, Provider: "SNS"}},
		{"missing", api.WebhookVerificationModuleRequest{Secret: ptr(secret)}, "ERR_7029", "provider", nil},
		{"empty", api.WebhookVerificationModuleRequest{Provider: ptr(""), Secret: ptr(secret)}, "ERR_7029", "provider", nil},
		{"unknown", api.WebhookVerificationModuleRequest{Provider: ptr("orb"), Secret: ptr(secret)}, "ERR_7030", "provider", nil},
		{"sns secret", api.WebhookVerificationModuleRequest{Provider: ptr("sns"), Secret: ptr(secret)}, "ERR_7026", "secret", nil},
		{"no secret", api.WebhookVerificationModuleRequest{Provider: ptr("github")}, "ERR_7027", "secret", nil},
		{"long secret", api.WebhookVerificationModuleRequest{Provider: ptr("github"), Secret: ptr(secret + strings.Repeat("x", MaxWebhookSecretBytes))}, "ERR_7154", "secret", nil},
		{"sendgrid key not a key", api.WebhookVerificationModuleRequest{Provider: ptr("SendGrid"), Secret: ptr(secret)}, "ERR_7107", "secret", nil},
		{"vmware without ::", api.WebhookVerificationModuleRequest{Provider: ptr("vmware"), Secret: ptr(secret)}, "ERR_7107", "secret", nil},
		{"svix secret not base64", api.WebhookVerificationModuleRequest{Provider: ptr("svix"), Secret: ptr("whsec_" + secret)}, "ERR_7107", "secret", nil},
		{"vmware", api.WebhookVerificationModuleRequest{Provider: ptr("vmware"), Secret: ptr("hooks::" + secret)}, "", "", &api.WebhookVerificationModule{Enabled: true, Provider: "vmware", Secret: "hooks::" + secret}},
	} {
		got, err := WebhookVerification(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the message repeats the secret: %v", tt.name, err)
		}
	}
	if len(WebhookProviders) != 65 {
		t.Errorf("%d webhook providers, want the 65 of details.md §10.1", len(WebhookProviders))
	}
	_, err := WebhookVerification(&api.WebhookVerificationModuleRequest{Provider: ptr("nope"), Secret: ptr(secret)})
	if !strings.Contains(err.Error(), "zoom") {
		t.Errorf("ERR_7030 does not list the providers: %v", err)
	}
}

func TestUserAgentFilter(t *testing.T) {
	for _, tt := range []struct {
		name      string
		req       api.UserAgentFilterModuleRequest
		code, fld string
		out       *api.UserAgentFilterModule
	}{
		{"empty", api.UserAgentFilterModuleRequest{}, "", "", &api.UserAgentFilterModule{Enabled: true, Allow: []string{}, Deny: []string{}}},
		{"patterns", api.UserAgentFilterModuleRequest{Allow: []string{"^$", `(?i)curl/\d+`}, Deny: []string{".*bot.*"}}, "", "", &api.UserAgentFilterModule{Enabled: true, Allow: []string{"^$", `(?i)curl/\d+`}, Deny: []string{".*bot.*"}}},
		{"bad allow", api.UserAgentFilterModuleRequest{Allow: []string{"("}}, "ERR_2090", "allow", nil},
		{"lookahead deny", api.UserAgentFilterModuleRequest{Deny: []string{"ok", "(?!bot)"}}, "ERR_2090", "deny", nil},
	} {
		got, err := UserAgentFilter(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
	_, err := UserAgentFilter(&api.UserAgentFilterModuleRequest{Deny: []string{"(?!bot)"}})
	if !strings.Contains(err.Error(), `"(?!bot)"`) {
		t.Errorf("ERR_2090 does not name the pattern: %v", err)
	}
}

func TestIDLists(t *testing.T) {
	ids := func(n int) []string {
		l := make([]string, n)
		for i := range l {
			l[i] = "x" + strings.Repeat("a", i)
		}
		return l
	}
	for _, tt := range []struct {
		name string
		err  error
		code string
	}{
		{"policies ok", IPPolicyIDs(ids(MaxIPPolicies)), ""},
		{"no policies", IPPolicyIDs(nil), "ERR_7025"},
		{"too many policies", IPPolicyIDs(ids(MaxIPPolicies + 1)), "ERR_7013"},
		{"policy twice", IPPolicyIDs([]string{"ipp_a", "ipp_a"}), "ERR_215"},
		{"CAs ok", CertificateAuthorityIDs(ids(10)), ""},
		{"no CAs", CertificateAuthorityIDs([]string{}), "ERR_215"},
		{"eleven CAs", CertificateAuthorityIDs(ids(11)), "ERR_7075"},
		{"CA twice", CertificateAuthorityIDs([]string{"ca_a", "ca_b", "ca_a"}), "ERR_215"},
	} {
		if got := code(tt.err); got != tt.code {
			t.Errorf("%s: %v (%q), want %q", tt.name, tt.err, got, tt.code)
		}
	}
}

func TestRouteMatch(t *testing.T) {
	for _, tt := range []struct {
		matchType, match, code string
	}{
		{"exact_path", "/", ""},
		{"path_prefix", "/api/v1", ""},
		{"path_prefix", "/" + strings.Repeat("a", MaxRouteMatchBytes-1), ""},
		{"regex", "/", "ERR_7130"},
		{"", "/", "ERR_7130"},
		{"exact_path", "", "ERR_7123"},
		{"exact_path", "example.com/blog", "ERR_7131"},
		{"exact_path", "/a b", "ERR_7131"},
		{"exact_path", "/a\x00", "ERR_7131"},
		{"exact_path", "/" + strings.Repeat("a", MaxRouteMatchBytes), "ERR_7135"},
	} {
		if err := RouteMatch(tt.matchType, tt.match); code(err) != tt.code {
			t.Errorf("RouteMatch(%q, %q) = %v, want %q", tt.matchType, Clip(tt.match), err, tt.code)
		}
	}
}

func TestHostport(t *testing.T) {
	for _, tt := range []struct {
		in, host string
		port     int
		code     string
	}{
		{"Example.COM:443", "example.com", 443, ""},
		{"*.example.com:443", "*.example.com", 443, ""},
		{"1.tcp.example.com:20000", "1.tcp.example.com", 20000, ""},
		{"example.com", "", 0, "ERR_7104"},
		{"example.com:", "", 0, "ERR_7104"},
		{":443", "", 0, "ERR_7104"},
		{"exa mple.com:443", "", 0, "ERR_7104"},
		{"example.com:https", "", 0, "ERR_7104"},
		{"example.com:+443", "", 0, "ERR_7104"},
		{"example.com:443\n", "", 0, "ERR_7104"},
		{"example.com:0", "", 0, "ERR_7112"},
		{"example.com:65536", "", 0, "ERR_7112"},
		{"example.com:99999999999999999999", "", 0, "ERR_7112"},
	} {
		host, port, err := Hostport(tt.in)
		if code(err) != tt.code || host != tt.host || port != tt.port {
			t.Errorf("Hostport(%q) = %q, %d, %v; want %q, %d, %q", tt.in, host, port, err, tt.host, tt.port, tt.code)
		}
	}
}

// Every message repeats a caller's value clipped (Quote), however long the value.
func TestModuleMessagesClipped(t *testing.T) {
	huge := strings.Repeat("x", 10000)
	_, err1 := Headers(&api.HeadersModuleRequest{Add: map[string]string{huge + " ": "v"}})
	_, err2 := UserAgentFilter(&api.UserAgentFilterModuleRequest{Allow: []string{"(" + huge}})
	_, err3 := WebhookVerification(&api.WebhookVerificationModuleRequest{Provider: &huge})
	_, _, err4 := Hostport(huge)
	_, err5 := TLSTermination(&api.TLSTerminationModuleRequest{MinVersion: &huge}, "tls")
	_, err6 := OAuth(&api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{GitHub: &api.OAuthGitHubRequest{Teams: []string{huge[:200]}}}})
	for i, err := range []error{err1, err2, err3, RouteMatch(huge, "/"), RouteMatch("exact_path", huge[:500]+" "), err4, err5, err6} {
		if err == nil || len(err.Error()) > 1500 {
			t.Errorf("case %d: %d bytes: %.200v", i+1, len(fmt.Sprint(err)), err)
		}
	}
}
