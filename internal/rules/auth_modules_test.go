package rules

import (
	"os"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// secretValue is a client secret that no message may repeat.
const secretValue = "top-secret-client-value"

func noSecret(t *testing.T, name string, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secretValue) {
		t.Errorf("%s: the message repeats the secret: %v", name, err)
	}
}

func strs(n int, f func(i int) string) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = f(i)
	}
	return l
}

func TestSessionFields(t *testing.T) {
	const year = 365 * 24 * 3600
	for _, tt := range []struct {
		name      string
		req       api.SessionFieldsRequest
		code, fld string
		out       api.SessionFields
	}{
		{"defaults", api.SessionFieldsRequest{}, "", "", api.SessionFields{Enabled: true, CookiePrefix: "def."}},
		{"all given", api.SessionFieldsRequest{Enabled: ptr(false), OptionsPassthrough: ptr(true), CookiePrefix: ptr("My.App2."), InactivityTimeout: ptr[int64](year), MaximumDuration: ptr[int64](year)},
			"", "", api.SessionFields{OptionsPassthrough: true, CookiePrefix: "My.App2.", InactivityTimeout: year, MaximumDuration: year}},
		{"empty cookie prefix", api.SessionFieldsRequest{CookiePrefix: ptr("")}, "", "", api.SessionFields{Enabled: true}},
		{"zeros", api.SessionFieldsRequest{InactivityTimeout: ptr[int64](0), MaximumDuration: ptr[int64](0)}, "", "", api.SessionFields{Enabled: true, CookiePrefix: "def."}},
		{"cookie underscore", api.SessionFieldsRequest{CookiePrefix: ptr("my_app")}, "ERR_7042", "cookie_prefix", api.SessionFields{}},
		{"cookie non-ASCII", api.SessionFieldsRequest{CookiePrefix: ptr("café")}, "ERR_7042", "cookie_prefix", api.SessionFields{}},
		{"cookie too long", api.SessionFieldsRequest{CookiePrefix: ptr(strings.Repeat("a", MaxCookiePrefixBytes+1))}, "ERR_7136", "cookie_prefix", api.SessionFields{}},
		{"inactivity over a year", api.SessionFieldsRequest{InactivityTimeout: ptr[int64](year + 1)}, "ERR_7092", "inactivity_timeout", api.SessionFields{}},
		{"inactivity negative", api.SessionFieldsRequest{InactivityTimeout: ptr[int64](-1)}, "ERR_215", "inactivity_timeout", api.SessionFields{}},
		{"duration too short", api.SessionFieldsRequest{MaximumDuration: ptr[int64](MinMaximumDuration - 1)}, "ERR_7161", "maximum_duration", api.SessionFields{}},
		{"duration over a year", api.SessionFieldsRequest{MaximumDuration: ptr[int64](year + 1)}, "ERR_7162", "maximum_duration", api.SessionFields{}},
		{"duration negative", api.SessionFieldsRequest{MaximumDuration: ptr[int64](-5)}, "ERR_215", "maximum_duration", api.SessionFields{}},
	} {
		got, err := session(&tt.req, "def.")
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
}

func TestOAuth(t *testing.T) {
	own := func(app api.OAuthAppRequest) *api.OAuthAppRequest {
		app.ClientID, app.ClientSecret = ptr("client-id"), ptr(secretValue)
		return &app
	}
	gh := func(g api.OAuthGitHubRequest) *api.OAuthProviderRequest {
		return &api.OAuthProviderRequest{GitHub: &g}
	}
	emails := func(l ...string) *api.OAuthProviderRequest {
		return &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{EmailAddresses: l}}
	}
	domains := func(l ...string) *api.OAuthProviderRequest {
		return &api.OAuthProviderRequest{Microsoft: &api.OAuthAppRequest{EmailDomains: l}}
	}
	empty := api.OAuthApp{Scopes: []string{}, EmailAddresses: []string{}, EmailDomains: []string{}}
	session := api.SessionFields{Enabled: true, CookiePrefix: DefaultOAuthCookiePrefix}
	for _, tt := range []struct {
		name      string
		req       api.OAuthModuleRequest
		code, fld string
		out       *api.OAuthModule
	}{
		{"managed google", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{}}}, "", "",
			&api.OAuthModule{SessionFields: session, Provider: api.OAuthProvider{Google: &empty}}},
		{"own amazon app with scopes", api.OAuthModuleRequest{
			SessionFieldsRequest: api.SessionFieldsRequest{Enabled: ptr(false), CookiePrefix: ptr("")},
			AuthCheckInterval:    ptr[int64](300),
			Provider:             &api.OAuthProviderRequest{Amazon: own(api.OAuthAppRequest{Scopes: []string{"profile"}, EmailAddresses: []string{"a@example.com", "b.c+d@xn--bcher-kva.example"}, EmailDomains: []string{"example.com"}})},
		}, "", "", &api.OAuthModule{
			AuthCheckInterval: 300,
			Provider: api.OAuthProvider{Amazon: &api.OAuthApp{ClientID: ptr("client-id"), ClientSecret: ptr(secretValue), Scopes: []string{"profile"},
				EmailAddresses: []string{"a@example.com", "b.c+d@xn--bcher-kva.example"}, EmailDomains: []string{"example.com"}}},
		}},
		{"github teams and organizations", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"my-org/core_team.1", "12345"}, Organizations: []string{"My-Org"}})}, "", "",
			&api.OAuthModule{SessionFields: session, Provider: api.OAuthProvider{GitHub: &api.OAuthGitHub{OAuthApp: empty, Teams: []string{"my-org/core_team.1", "12345"}, Organizations: []string{"My-Org"}}}}},
		{"github defaults", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{})}, "", "",
			&api.OAuthModule{SessionFields: session, Provider: api.OAuthProvider{GitHub: &api.OAuthGitHub{OAuthApp: empty, Teams: []string{}, Organizations: []string{}}}}},
		{"empty id and secret mean managed", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Twitch: &api.OAuthAppRequest{ClientID: ptr(""), ClientSecret: ptr("")}}}, "", "",
			&api.OAuthModule{SessionFields: session, Provider: api.OAuthProvider{Twitch: &empty}}},
		{"interval 0", api.OAuthModuleRequest{AuthCheckInterval: ptr[int64](0), Provider: &api.OAuthProviderRequest{GitLab: &api.OAuthAppRequest{}}}, "", "",
			&api.OAuthModule{SessionFields: session, Provider: api.OAuthProvider{GitLab: &empty}}},

		{"no provider member", api.OAuthModuleRequest{}, "ERR_7037", "provider", nil},
		{"empty provider", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{}}, "ERR_7037", "provider", nil},
		{"two providers", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{}, LinkedIn: &api.OAuthAppRequest{}}}, "ERR_7036", "provider", nil},
		{"id only", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{ClientID: ptr("id")}}}, "ERR_7033", "provider.google.client_id", nil},
		{"secret only", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{ClientSecret: ptr(secretValue)}}}, "ERR_7033", "provider.google.client_id", nil},
		{"amazon managed", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Amazon: &api.OAuthAppRequest{}}}, "ERR_7166", "provider.amazon.client_id", nil},
		{"facebook managed", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Facebook: &api.OAuthAppRequest{}}}, "ERR_7166", "provider.facebook.client_id", nil},
		{"scopes with managed app", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{Scopes: []string{"email"}}}}, "ERR_7034", "provider.google.scopes", nil},
		{"client id too long", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{ClientID: ptr(strings.Repeat("i", MaxClientIDBytes+1)), ClientSecret: ptr(secretValue)}}}, "ERR_7137", "provider.google.client_id", nil},
		{"client secret too long", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{ClientID: ptr("id"), ClientSecret: ptr(secretValue + strings.Repeat("s", MaxClientSecretBytes))}}}, "ERR_7138", "provider.google.client_secret", nil},
		{"client secret control character", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{ClientID: ptr("id"), ClientSecret: ptr(secretValue + "\n")}}}, "ERR_215", "provider.google.client_secret", nil},
		{"empty scope", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: own(api.OAuthAppRequest{Scopes: []string{""}})}}, "ERR_215", "provider.google.scopes", nil},
		{"scope twice", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: own(api.OAuthAppRequest{Scopes: []string{"a", "a"}})}}, "ERR_215", "provider.google.scopes", nil},
		{"too many scopes", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: own(api.OAuthAppRequest{Scopes: strs(MaxAuthListEntries+1, func(i int) string { return strings.Repeat("s", i+1) })})}}, "ERR_7056", "provider.google.scopes", nil},
		{"scope too long", api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: own(api.OAuthAppRequest{Scopes: []string{strings.Repeat("s", MaxAuthValueBytes+1)}})}}, "ERR_7141", "provider.google.scopes", nil},
		{"interval too short", api.OAuthModuleRequest{AuthCheckInterval: ptr[int64](59), Provider: emails()}, "ERR_7035", "auth_check_interval", nil},
		{"interval too long", api.OAuthModuleRequest{AuthCheckInterval: ptr[int64](MaxAuthCheckInterval + 1), Provider: emails()}, "ERR_7158", "auth_check_interval", nil},
		{"interval negative", api.OAuthModuleRequest{AuthCheckInterval: ptr[int64](-1), Provider: emails()}, "ERR_215", "auth_check_interval", nil},
		{"session rule", api.OAuthModuleRequest{SessionFieldsRequest: api.SessionFieldsRequest{CookiePrefix: ptr("a-b")}, Provider: emails()}, "ERR_7042", "cookie_prefix", nil},

		{"email uppercase", api.OAuthModuleRequest{Provider: emails("A@example.com")}, "ERR_7067", "provider.google.email_addresses", nil},
		{"email without @", api.OAuthModuleRequest{Provider: emails("example.com")}, "ERR_7043", "provider.google.email_addresses", nil},
		{"email bad domain", api.OAuthModuleRequest{Provider: emails("a@-example.com")}, "ERR_7043", "provider.google.email_addresses", nil},
		{"email bare host", api.OAuthModuleRequest{Provider: emails("a@localhost")}, "ERR_7043", "provider.google.email_addresses", nil},
		{"email punycode", api.OAuthModuleRequest{Provider: emails("a@xn--99999999999.com")}, "ERR_7044", "provider.google.email_addresses", nil},
		{"email twice", api.OAuthModuleRequest{Provider: emails("a@example.com", "a@example.com")}, "ERR_7046", "provider.google.email_addresses", nil},
		{"email empty", api.OAuthModuleRequest{Provider: emails("")}, "ERR_7051", "provider.google.email_addresses", nil},
		{"too many emails", api.OAuthModuleRequest{Provider: emails(strs(MaxEmailAddresses+1, func(i int) string { return strings.Repeat("a", i%200+1) + "@example.com" })...)}, "ERR_7060", "provider.google.email_addresses", nil},
		{"email too long", api.OAuthModuleRequest{Provider: emails(strings.Repeat("a", MaxEmailAddressBytes) + "@example.com")}, "ERR_7139", "provider.google.email_addresses", nil},
		{"domain uppercase", api.OAuthModuleRequest{Provider: domains("Example.com")}, "ERR_7068", "provider.microsoft.email_domains", nil},
		{"domain invalid", api.OAuthModuleRequest{Provider: domains("exa_mple.com")}, "ERR_7039", "provider.microsoft.email_domains", nil},
		{"domain with @", api.OAuthModuleRequest{Provider: domains("@example.com")}, "ERR_7039", "provider.microsoft.email_domains", nil},
		{"domain punycode", api.OAuthModuleRequest{Provider: domains("xn--a.com")}, "ERR_7045", "provider.microsoft.email_domains", nil},
		{"domain twice", api.OAuthModuleRequest{Provider: domains("example.com", "example.com")}, "ERR_7047", "provider.microsoft.email_domains", nil},
		{"domain empty", api.OAuthModuleRequest{Provider: domains(" ")}, "ERR_7052", "provider.microsoft.email_domains", nil},
		{"too many domains", api.OAuthModuleRequest{Provider: domains(strs(MaxAuthListEntries+1, func(i int) string { return strings.Repeat("a", i+1) + ".com" })...)}, "ERR_7061", "provider.microsoft.email_domains", nil},
		{"domain too long", api.OAuthModuleRequest{Provider: domains(strings.Repeat("a.", 127) + "com")}, "ERR_7140", "provider.microsoft.email_domains", nil},
		{"team without org", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"core"}})}, "ERR_7040", "provider.github.teams", nil},
		{"team with space", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"org/core team"}})}, "ERR_7040", "provider.github.teams", nil},
		{"team three parts", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"a/b/c"}})}, "ERR_7040", "provider.github.teams", nil},
		{"team twice", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"o/t", "o/t"}})}, "ERR_7048", "provider.github.teams", nil},
		{"team empty", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{""}})}, "ERR_7053", "provider.github.teams", nil},
		{"too many teams", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: strs(MaxAuthListEntries+1, func(i int) string { return "o/" + strings.Repeat("t", i+1) })})}, "ERR_7057", "provider.github.teams", nil},
		{"team too long", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Teams: []string{"o/" + strings.Repeat("t", MaxAuthValueBytes)}})}, "ERR_7142", "provider.github.teams", nil},
		{"organization twice", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Organizations: []string{"o", "o"}})}, "ERR_7049", "provider.github.organizations", nil},
		{"organization empty", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Organizations: []string{""}})}, "ERR_7054", "provider.github.organizations", nil},
		{"too many organizations", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Organizations: strs(MaxAuthListEntries+1, func(i int) string { return strings.Repeat("o", i+1) })})}, "ERR_7058", "provider.github.organizations", nil},
		{"organization too long", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Organizations: []string{strings.Repeat("o", MaxAuthValueBytes+1)}})}, "ERR_7143", "provider.github.organizations", nil},
		{"organization slug", api.OAuthModuleRequest{Provider: gh(api.OAuthGitHubRequest{Organizations: []string{"my/org"}})}, "ERR_215", "provider.github.organizations", nil},
	} {
		got, err := OAuth(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
		noSecret(t, tt.name, err)
	}
}

func TestOAuthProviderMembers(t *testing.T) {
	// Each of the eight members, alone, is the one provider; the others stay null.
	for _, name := range OAuthProviders {
		app := &api.OAuthAppRequest{ClientID: ptr("id"), ClientSecret: ptr(secretValue)}
		p := &api.OAuthProviderRequest{}
		switch name {
		case "github":
			p.GitHub = &api.OAuthGitHubRequest{OAuthAppRequest: *app}
		case "facebook":
			p.Facebook = app
		case "microsoft":
			p.Microsoft = app
		case "google":
			p.Google = app
		case "linkedin":
			p.LinkedIn = app
		case "gitlab":
			p.GitLab = app
		case "twitch":
			p.Twitch = app
		case "amazon":
			p.Amazon = app
		}
		got, err := OAuth(&api.OAuthModuleRequest{Provider: p})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		set := map[string]bool{
			"github": got.Provider.GitHub != nil, "facebook": got.Provider.Facebook != nil, "microsoft": got.Provider.Microsoft != nil,
			"google": got.Provider.Google != nil, "linkedin": got.Provider.LinkedIn != nil, "gitlab": got.Provider.GitLab != nil,
			"twitch": got.Provider.Twitch != nil, "amazon": got.Provider.Amazon != nil,
		}
		for other, isSet := range set {
			if isSet != (other == name) {
				t.Errorf("provider %s: member %s set = %v", name, other, isSet)
			}
		}
	}
}

func TestOIDC(t *testing.T) {
	base := func(f func(r *api.OIDCModuleRequest)) api.OIDCModuleRequest {
		r := api.OIDCModuleRequest{Issuer: ptr("https://accounts.example.com/tenant"), ClientID: ptr("client-id"), ClientSecret: ptr(secretValue)}
		if f != nil {
			f(&r)
		}
		return r
	}
	for _, tt := range []struct {
		name      string
		req       api.OIDCModuleRequest
		code, fld string
		out       *api.OIDCModule
	}{
		{"defaults", base(nil), "", "", &api.OIDCModule{SessionFields: api.SessionFields{Enabled: true}, Issuer: "https://accounts.example.com/tenant", ClientID: "client-id", ClientSecret: secretValue,
			Scopes: []string{}, EmailAddresses: []string{}, EmailDomains: []string{}}},
		{"http issuer and scopes", base(func(r *api.OIDCModuleRequest) {
			r.Issuer, r.Scopes, r.CookiePrefix, r.OptionsPassthrough = ptr("http://127.0.0.1:8080"), []string{"openid", "email"}, ptr("sso."), ptr(true)
		}), "", "", &api.OIDCModule{SessionFields: api.SessionFields{Enabled: true, CookiePrefix: "sso.", OptionsPassthrough: true}, Issuer: "http://127.0.0.1:8080", ClientID: "client-id", ClientSecret: secretValue,
			Scopes: []string{"openid", "email"}, EmailAddresses: []string{}, EmailDomains: []string{}}},
		{"e-mail rules", base(func(r *api.OIDCModuleRequest) {
			r.EmailAddresses, r.EmailDomains = []string{"alice@example.com", "bob@xn--bcher-kva.example"}, []string{"corp.example"}
		}), "", "", &api.OIDCModule{SessionFields: api.SessionFields{Enabled: true}, Issuer: "https://accounts.example.com/tenant", ClientID: "client-id", ClientSecret: secretValue,
			Scopes: []string{}, EmailAddresses: []string{"alice@example.com", "bob@xn--bcher-kva.example"}, EmailDomains: []string{"corp.example"}}},
		{"no issuer", base(func(r *api.OIDCModuleRequest) { r.Issuer = nil }), "ERR_7088", "issuer", nil},
		{"empty issuer", base(func(r *api.OIDCModuleRequest) { r.Issuer = ptr("") }), "ERR_7088", "issuer", nil},
		{"no client id", base(func(r *api.OIDCModuleRequest) { r.ClientID = nil }), "ERR_7089", "client_id", nil},
		{"empty client id", base(func(r *api.OIDCModuleRequest) { r.ClientID = ptr("") }), "ERR_7089", "client_id", nil},
		{"no client secret", base(func(r *api.OIDCModuleRequest) { r.ClientSecret = nil }), "ERR_7090", "client_secret", nil},
		{"issuer too long", base(func(r *api.OIDCModuleRequest) { r.Issuer = ptr("https://example.com/" + strings.Repeat("a", 236)) }), "ERR_7087", "issuer", nil},
		{"issuer not absolute", base(func(r *api.OIDCModuleRequest) { r.Issuer = ptr("accounts.example.com") }), "ERR_215", "issuer", nil},
		{"issuer other scheme", base(func(r *api.OIDCModuleRequest) { r.Issuer = ptr("ftp://example.com") }), "ERR_215", "issuer", nil},
		{"issuer with credentials", base(func(r *api.OIDCModuleRequest) { r.Issuer = ptr("https://u:p@example.com") }), "ERR_215", "issuer", nil},
		{"client id too long", base(func(r *api.OIDCModuleRequest) { r.ClientID = ptr(strings.Repeat("i", MaxClientIDBytes+1)) }), "ERR_7137", "client_id", nil},
		{"client id control character", base(func(r *api.OIDCModuleRequest) { r.ClientID = ptr("id\t") }), "ERR_215", "client_id", nil},
		{"client secret too long", base(func(r *api.OIDCModuleRequest) {
			r.ClientSecret = ptr(secretValue + strings.Repeat("s", MaxClientSecretBytes))
		}), "ERR_7138", "client_secret", nil},
		{"scope twice", base(func(r *api.OIDCModuleRequest) { r.Scopes = []string{"openid", "openid"} }), "ERR_215", "scopes", nil},
		{"session rule", base(func(r *api.OIDCModuleRequest) { r.InactivityTimeout = ptr[int64](MaxInactivityTimeout + 1) }), "ERR_7092", "inactivity_timeout", nil},
		// The e-mail rules are an OAuth provider's, with their codes.
		{"email uppercase", base(func(r *api.OIDCModuleRequest) { r.EmailAddresses = []string{"A@example.com"} }), "ERR_7067", "email_addresses", nil},
		{"email without @", base(func(r *api.OIDCModuleRequest) { r.EmailAddresses = []string{"example.com"} }), "ERR_7043", "email_addresses", nil},
		{"email punycode", base(func(r *api.OIDCModuleRequest) { r.EmailAddresses = []string{"a@xn--99999999999.com"} }), "ERR_7044", "email_addresses", nil},
		{"email twice", base(func(r *api.OIDCModuleRequest) { r.EmailAddresses = []string{"a@example.com", "a@example.com"} }), "ERR_7046", "email_addresses", nil},
		{"email empty", base(func(r *api.OIDCModuleRequest) { r.EmailAddresses = []string{""} }), "ERR_7051", "email_addresses", nil},
		{"too many emails", base(func(r *api.OIDCModuleRequest) {
			r.EmailAddresses = strs(MaxEmailAddresses+1, func(i int) string { return strings.Repeat("a", i%200+1) + "@example.com" })
		}), "ERR_7060", "email_addresses", nil},
		{"email too long", base(func(r *api.OIDCModuleRequest) {
			r.EmailAddresses = []string{strings.Repeat("a", MaxEmailAddressBytes) + "@example.com"}
		}), "ERR_7139", "email_addresses", nil},
		{"domain uppercase", base(func(r *api.OIDCModuleRequest) { r.EmailDomains = []string{"Example.com"} }), "ERR_7068", "email_domains", nil},
		{"domain invalid", base(func(r *api.OIDCModuleRequest) { r.EmailDomains = []string{"example"} }), "ERR_7039", "email_domains", nil},
		{"domain punycode", base(func(r *api.OIDCModuleRequest) { r.EmailDomains = []string{"xn--99999999999.com"} }), "ERR_7045", "email_domains", nil},
		{"domain twice", base(func(r *api.OIDCModuleRequest) { r.EmailDomains = []string{"example.com", "example.com"} }), "ERR_7047", "email_domains", nil},
		{"domain empty", base(func(r *api.OIDCModuleRequest) { r.EmailDomains = []string{" "} }), "ERR_7052", "email_domains", nil},
		{"too many domains", base(func(r *api.OIDCModuleRequest) {
			r.EmailDomains = strs(MaxAuthListEntries+1, func(i int) string { return strings.Repeat("d", i+1) + ".example" })
		}), "ERR_7061", "email_domains", nil},
		{"domain too long", base(func(r *api.OIDCModuleRequest) {
			r.EmailDomains = []string{strings.Repeat("d", MaxEmailDomainBytes) + ".example"}
		}), "ERR_7140", "email_domains", nil},
	} {
		got, err := OIDC(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
		noSecret(t, tt.name, err)
	}
}

func idpMetadata(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/idp_metadata.xml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withKey adds a KeyDescriptor holding one X509Certificate of the given text to the IdP's
// IDPSSODescriptor; use "" leaves the attribute out.
func withKey(md, use, cert string) string {
	attr := ""
	if use != "" {
		attr = ` use="` + use + `"`
	}
	kd := `<md:KeyDescriptor` + attr + `><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>` +
		`<ds:X509Certificate>` + cert + `</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`
	return strings.Replace(md, `WantAuthnRequestsSigned="false">`, `WantAuthnRequestsSigned="false">`+kd, 1)
}

func TestSAML(t *testing.T) {
	md := idpMetadata(t)
	_, leaf, _ := fuzzPEMs(t)
	cert := strings.Join(strings.Split(leaf, "\n")[1:strings.Count(leaf, "\n")-1], "\n") // the PEM's base64 lines
	signed := withKey(md, "signing", cert)
	entities := `<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">` + strings.TrimPrefix(md, `<?xml version="1.0" encoding="UTF-8"?>`) + `</EntitiesDescriptor>`
	twoEntities := `<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">` + strings.Repeat(strings.TrimPrefix(md, `<?xml version="1.0" encoding="UTF-8"?>`), 2) + `</EntitiesDescriptor>`
	defaults := func(md string) *api.SAMLModule {
		return &api.SAMLModule{SessionFields: api.SessionFields{Enabled: true}, IdPMetadata: md, AllowIdPInitiated: true, AuthorizedGroups: []string{}, NameIDFormat: DefaultSAMLNameIDFormat}
	}
	for _, tt := range []struct {
		name      string
		req       api.SAMLModuleRequest
		code, fld string
		out       *api.SAMLModule
	}{
		{"defaults", api.SAMLModuleRequest{IdPMetadata: &md}, "", "", defaults(md)},
		{"entities descriptor with one", api.SAMLModuleRequest{IdPMetadata: &entities}, "", "", defaults(entities)},
		{"all given", api.SAMLModuleRequest{
			SessionFieldsRequest: api.SessionFieldsRequest{Enabled: ptr(false), CookiePrefix: ptr("saml.")},
			IdPMetadata:          &md, ForceAuthn: ptr(true), AllowIdPInitiated: ptr(false), AuthorizedGroups: []string{"admins", "ops"},
			NameIDFormat: ptr("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"),
		}, "", "", &api.SAMLModule{SessionFields: api.SessionFields{CookiePrefix: "saml."}, IdPMetadata: md, ForceAuthn: true, AuthorizedGroups: []string{"admins", "ops"}, NameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"}},
		{"no metadata", api.SAMLModuleRequest{}, "ERR_7091", "idp_metadata", nil},
		{"blank metadata", api.SAMLModuleRequest{IdPMetadata: ptr(" \n")}, "ERR_7091", "idp_metadata", nil},
		{"metadata too large", api.SAMLModuleRequest{IdPMetadata: ptr(md + strings.Repeat(" ", MaxSAMLMetadataBytes))}, "ERR_7080", "idp_metadata", nil},
		{"not XML", api.SAMLModuleRequest{IdPMetadata: ptr("{}")}, "ERR_7083", "idp_metadata", nil},
		{"truncated", api.SAMLModuleRequest{IdPMetadata: ptr(md[:len(md)/2])}, "ERR_7083", "idp_metadata", nil},
		{"other root", api.SAMLModuleRequest{IdPMetadata: ptr(`<html><body/></html>`)}, "ERR_7083", "idp_metadata", nil},
		{"wrong namespace", api.SAMLModuleRequest{IdPMetadata: ptr(strings.ReplaceAll(md, "SAML:2.0:metadata", "SAML:9.9:metadata"))}, "ERR_7083", "idp_metadata", nil},
		{"no IDPSSODescriptor", api.SAMLModuleRequest{IdPMetadata: ptr(strings.ReplaceAll(md, "IDPSSODescriptor", "SPSSODescriptor"))}, "ERR_7083", "idp_metadata", nil},
		{"no entityID", api.SAMLModuleRequest{IdPMetadata: ptr(strings.Replace(md, `entityID="https://idp.example.com/metadata"`, "", 1))}, "ERR_7083", "idp_metadata", nil},
		{"two entities", api.SAMLModuleRequest{IdPMetadata: &twoEntities}, "ERR_7083", "idp_metadata", nil},
		{"nameid unsupported", api.SAMLModuleRequest{IdPMetadata: &md, NameIDFormat: ptr("urn:oasis:names:tc:SAML:2.0:nameid-format:kerberos")}, "ERR_1693", "nameid_format", nil},
		{"group twice", api.SAMLModuleRequest{IdPMetadata: &md, AuthorizedGroups: []string{"a", "a"}}, "ERR_7050", "authorized_groups", nil},
		{"group empty", api.SAMLModuleRequest{IdPMetadata: &md, AuthorizedGroups: []string{""}}, "ERR_7055", "authorized_groups", nil},
		{"too many groups", api.SAMLModuleRequest{IdPMetadata: &md, AuthorizedGroups: strs(MaxAuthListEntries+1, func(i int) string { return strings.Repeat("g", i+1) })}, "ERR_7059", "authorized_groups", nil},
		{"group too long", api.SAMLModuleRequest{IdPMetadata: &md, AuthorizedGroups: []string{strings.Repeat("g", MaxAuthValueBytes+1)}}, "ERR_7144", "authorized_groups", nil},
		{"session rule", api.SAMLModuleRequest{IdPMetadata: &md, SessionFieldsRequest: api.SessionFieldsRequest{MaximumDuration: ptr[int64](1)}}, "ERR_7161", "maximum_duration", nil},
		{"signing certificate", api.SAMLModuleRequest{IdPMetadata: &signed}, "", "", defaults(signed)},
		{"encryption certificate not read", api.SAMLModuleRequest{IdPMetadata: ptr(withKey(md, "encryption", "not base64"))}, "", "", defaults(withKey(md, "encryption", "not base64"))},
		{"signing certificate not base64", api.SAMLModuleRequest{IdPMetadata: ptr(withKey(md, "signing", "not base64!"))}, "ERR_7083", "idp_metadata", nil},
		{"signing certificate not DER", api.SAMLModuleRequest{IdPMetadata: ptr(withKey(md, "signing", "bm90IGEgY2VydGlmaWNhdGU="))}, "ERR_7083", "idp_metadata", nil},
		{"certificate without use not DER", api.SAMLModuleRequest{IdPMetadata: ptr(withKey(md, "", cert[:len(cert)/2]))}, "ERR_7083", "idp_metadata", nil},
		{"empty signing certificate", api.SAMLModuleRequest{IdPMetadata: ptr(withKey(md, "signing", ""))}, "ERR_7083", "idp_metadata", nil},
	} {
		got, err := SAML(&tt.req)
		want(t, tt.name, got, err, tt.code, tt.fld, tt.out)
	}
	for _, f := range SAMLNameIDFormats {
		if _, err := SAML(&api.SAMLModuleRequest{IdPMetadata: &md, NameIDFormat: ptr(f)}); err != nil {
			t.Errorf("nameid_format %s: %v", f, err)
		}
	}
	ed, err := IdPEntityDescriptor(md)
	if err != nil || ed.EntityID != "https://idp.example.com/metadata" || len(ed.IDPSSODescriptors[0].SingleSignOnServices) != 2 {
		t.Errorf("IdPEntityDescriptor = %+v, %v", ed, err)
	}
}
