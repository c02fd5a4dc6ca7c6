package rules

import (
	"strings"
	"testing"
)

func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.":       "example.com",
		"  app.example.com ": "app.example.com",
		"\tA.B.\n":           "a.b",
		"*.Example.com":      "*.example.com",
		"example.com..":      "example.com.",
		"":                   "",
	} {
		if got := NormalizeDomain(in); got != want {
			t.Errorf("NormalizeDomain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReservedDomain(t *testing.T) {
	const base = "warren.localhost"
	label63 := strings.Repeat("a", 63)
	long := strings.Repeat(label63+".", 4)[:250] + ".io" // 253 characters
	for _, tt := range []struct {
		name, base, want string
	}{
		// Accepted names.
		{"example.com", base, ""},
		{"app.example.com", base, ""},
		{"*.example.com", base, ""},
		{"*.app.example.com", base, ""},
		{"a-b.example.co.uk", base, ""},
		{"Mixed.Case.com", base, ""}, // A-Z are valid characters (the API lowercases first)
		{"1.example.com", base, ""},
		{label63 + ".com", base, ""},
		{long, base, ""},
		{"xn--bcher-kva.example", base, ""}, // bücher
		{"ab-c.example.com", base, ""},
		{"app.warren.localhost", base, ""},
		{"*.app.warren.localhost", base, ""},
		{"a.b.warren.localhost", base, ""},
		{"*.example.com", "", ""},
		{"warren.localhost", "", ""}, // without a base the apex check is skipped

		{"", base, "ERR_448"},
		{"localhost", base, "ERR_448"},
		{"com", base, "ERR_448"},
		{long + "x", base, "ERR_514"},
		{"my_app.example.com", base, "ERR_438"},
		{"_acme-challenge.example.com", base, "ERR_438"},
		{"exa mple.com", base, "ERR_406"},
		{"bücher.example", base, "ERR_406"},
		{"example.com/path", base, "ERR_406"},
		{"example.com:443", base, "ERR_406"},
		{"a..example.com", base, "ERR_409"},
		{".example.com", base, "ERR_407"},
		{"example.com.", base, "ERR_408"},
		{"-app.example.com", base, "ERR_407"},
		{"app-.example.com", base, "ERR_408"},
		{"app.example.-com", base, "ERR_407"},
		{"ab--c.example.com", base, "ERR_410"},
		{"xn--.example.com", base, "ERR_408"}, // a bad last character comes first
		{"xn--a-.example.com", base, "ERR_408"},
		{"xn--99999999999.example.com", base, "ERR_429"},
		{"app.*.example.com", base, "ERR_402"},
		{"*.*.example.com", base, "ERR_402"},
		{"*app.example.com", base, "ERR_403"},
		{"a*.example.com", base, "ERR_403"},
		{"**.example.com", base, "ERR_403"},
		{strings.Repeat("a", 64) + ".com", base, "ERR_513"},
		{"*.com", base, "ERR_416"},
		{"*.co.uk", base, "ERR_416"},
		{"*.github.io", base, "ERR_416"},
		{"*.localhost", base, "ERR_416"}, // an unlisted TLD is a suffix by the default rule
		{"*.example.co.uk", base, ""},
		{"warren.localhost", base, "ERR_404"},
		{"*.warren.localhost", base, "ERR_404"},
		{strings.Repeat("abcdefgh.", 7) + "x." + base, base, "ERR_423"}, // 64 characters before the base
		{strings.Repeat("abcdefgh.", 7) + "." + base, base, "ERR_409"},
	} {
		if got := code(ReservedDomain(tt.name, tt.base)); got != tt.want {
			t.Errorf("ReservedDomain(%q, %q) = %q (%v), want %q", tt.name, tt.base, got, ReservedDomain(tt.name, tt.base), tt.want)
		}
	}
	err := ReservedDomain("a_b.com", base).(*Violation)
	if err.Field != "domain" || !strings.Contains(err.Msg, `"a_b.com"`) {
		t.Errorf("violation = %+v, want field domain and the name in the message", err)
	}
}

func TestServiceSubdomain(t *testing.T) {
	for _, tt := range []struct {
		name, base string
		want       bool
	}{
		{"app.warren.localhost", "warren.localhost", true},
		{"*.app.warren.localhost", "warren.localhost", true},
		{"warren.localhost", "warren.localhost", false},
		{"appwarren.localhost", "warren.localhost", false},
		{"app.example.com", "warren.localhost", false},
		{"app.example.com", "", false},
	} {
		if got := ServiceSubdomain(tt.name, tt.base); got != tt.want {
			t.Errorf("ServiceSubdomain(%q, %q) = %v", tt.name, tt.base, got)
		}
	}
}

func TestRegions(t *testing.T) {
	for _, r := range Regions {
		if DomainRegion(r) != nil || AddrRegion(r) != nil {
			t.Errorf("region %q rejected", r)
		}
	}
	for _, r := range []string{"", "US", "global", "us-cal-1", "eu-west"} {
		if code(DomainRegion(r)) != "ERR_400" || code(AddrRegion(r)) != "ERR_500" {
			t.Errorf("region %q: %v / %v", r, DomainRegion(r), AddrRegion(r))
		}
	}
}

func TestResolvesTo(t *testing.T) {
	for _, tt := range []struct {
		values []string
		want   string
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"global"}, ""},
		{[]string{"us", "eu", "us-cal-1", "ap", "au", "in", "jp", "sa"}, ""},
		{[]string{"us", "us"}, "ERR_456"},
		{[]string{"us", "mars"}, "ERR_215"},
		{[]string{""}, "ERR_215"},
		{[]string{"US"}, "ERR_215"},
	} {
		if got := code(ResolvesTo(tt.values)); got != tt.want {
			t.Errorf("ResolvesTo(%q) = %q, want %q", tt.values, got, tt.want)
		}
	}
}

func TestCertificateRules(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tt := range []struct {
		id     *string
		policy bool
		want   string
	}{
		{nil, false, ""},
		{nil, true, ""},
		{s(""), true, ""}, // clients send "" beside a policy
		{s("cert_x"), false, ""},
		{s("cert_x"), true, "ERR_434"},
	} {
		if got := code(CertificateChoice(tt.id, tt.policy)); got != tt.want {
			t.Errorf("CertificateChoice(%v, %v) = %q, want %q", tt.id, tt.policy, got, tt.want)
		}
	}
	for _, tt := range []struct{ authority, keyType, want string }{
		{"", "", ""},
		{"letsencrypt", "ecdsa", ""},
		{"letsencrypt", "rsa", ""},
		{"", "rsa", ""},
		{"zerossl", "ecdsa", "ERR_435"},
		{"LetsEncrypt", "", "ERR_435"},
		{"letsencrypt", "ed25519", "ERR_1909"},
	} {
		if got := code(CertificateManagementPolicy(tt.authority, tt.keyType)); got != tt.want {
			t.Errorf("CertificateManagementPolicy(%q, %q) = %q, want %q", tt.authority, tt.keyType, got, tt.want)
		}
	}
}
