package rules

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/crewjam/saml"
	"golang.org/x/net/idna"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Authentication modules: oauth, oidc and saml (details.md §8.6). They share the session
// members, checked once by session.

// DefaultOAuthCookiePrefix is the OAuth cookie prefix when none is sent: the lowercase
// service name and a period (§8.6). OIDC and SAML default to "".
const DefaultOAuthCookiePrefix = "warren."

// Bounds of the session members, in seconds. 0 means "not enforced" (§8.6). The catalogue has
// codes for the interval and duration bounds but publishes no values; these are ours.
const (
	MaxInactivityTimeout = 365 * 24 * 3600 // one year (ERR_7092)
	MinAuthCheckInterval = 60              // ERR_7035
	MaxAuthCheckInterval = 365 * 24 * 3600 // ERR_7158
	MinMaximumDuration   = 60              // ERR_7161
	MaxMaximumDuration   = 365 * 24 * 3600 // ERR_7162
)

// Count and length caps of the auth modules (ERR_7056–7061, ERR_7136–7144, ERR_7087,
// ERR_7080); the values are ours except the issuer's 255 bytes.
const (
	MaxAuthListEntries      = 100 // scopes, teams, organizations, groups, e-mail domains
	MaxEmailAddresses       = 1000
	MaxCookiePrefixBytes    = 64
	MaxClientIDBytes        = 255
	MaxClientSecretBytes    = 1024
	MaxAuthValueBytes       = 255 // one scope, team, organization or group
	MaxEmailAddressBytes    = 254
	MaxEmailDomainBytes     = 253
	MaxIssuerBytes          = 255
	MaxSAMLMetadataBytes    = 256 << 10
	DefaultSAMLNameIDFormat = string(saml.PersistentNameIDFormat)
)

// SAMLNameIDFormats are the nameid formats the saml module accepts (§8.6: the safe set).
var SAMLNameIDFormats = []string{
	string(saml.PersistentNameIDFormat),
	string(saml.TransientNameIDFormat),
	string(saml.EmailAddressNameIDFormat),
	string(saml.UnspecifiedNameIDFormat),
}

// OAuthProviders are the members of an oauth module's provider, in api.md's order (§10.2).
var OAuthProviders = []string{"github", "facebook", "microsoft", "google", "linkedin", "gitlab", "twitch", "amazon"}

// NoManagedApp are the OAuth providers without a managed app: they need client_id and
// client_secret (ERR_7166).
var NoManagedApp = []string{"amazon", "facebook"}

// listCodes are the codes of one list member of an auth module: empty entry, duplicate
// entry, too many entries, an entry too long.
type listCodes struct{ empty, duplicate, count, length string }

var (
	emailCodes  = listCodes{"ERR_7051", "ERR_7046", "ERR_7060", "ERR_7139"}
	domainCodes = listCodes{"ERR_7052", "ERR_7047", "ERR_7061", "ERR_7140"}
	teamCodes   = listCodes{"ERR_7053", "ERR_7048", "ERR_7057", "ERR_7142"}
	orgCodes    = listCodes{"ERR_7054", "ERR_7049", "ERR_7058", "ERR_7143"}
	groupCodes  = listCodes{"ERR_7055", "ERR_7050", "ERR_7059", "ERR_7144"}
	// Scopes have a count code (ERR_7056) and a length code (ERR_7141) but none for an empty
	// or repeated scope: the generic ERR_215.
	scopeCodes = listCodes{"ERR_215", "ERR_215", "ERR_7056", "ERR_7141"}
)

// authList checks one list member: at most max entries, each non-empty, within maxBytes,
// without control characters, and not twice; then check (if any) on each entry. It returns
// the list, [] when never sent.
func authList(field, what string, codes listCodes, max, maxBytes int, l []string, check func(string) error) ([]string, error) {
	if len(l) > max {
		return nil, violation(codes.count, field, "At most %d %s may be listed; got %d.", max, what, len(l))
	}
	for i, v := range l {
		switch {
		case strings.TrimSpace(v) == "":
			return nil, violation(codes.empty, field, "%s may not contain an empty value.", field)
		case len(v) > maxBytes:
			return nil, violation(codes.length, field, "The value %s is %d bytes long; the maximum is %d bytes.", Quote(v), len(v), maxBytes)
		case slices.Contains(l[:i], v):
			return nil, violation(codes.duplicate, field, "The value %s is listed more than once in %s.", Quote(v), field)
		}
		if err := Identifier(codes.empty, field, v); err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(v); err != nil {
				return nil, err
			}
		}
	}
	return list(l), nil
}

// session checks the members the three auth modules share and applies their defaults.
func session(req *api.SessionFieldsRequest, defaultCookiePrefix string) (api.SessionFields, error) {
	out := api.SessionFields{Enabled: enabled(req.Enabled), CookiePrefix: defaultCookiePrefix}
	if req.OptionsPassthrough != nil {
		out.OptionsPassthrough = *req.OptionsPassthrough
	}
	if req.CookiePrefix != nil {
		p := *req.CookiePrefix
		if len(p) > MaxCookiePrefixBytes {
			return out, violation("ERR_7136", "cookie_prefix", "The cookie_prefix is %d bytes long; the maximum is %d bytes.", len(p), MaxCookiePrefixBytes)
		}
		if strings.ContainsFunc(p, func(r rune) bool { return !(r < 0x80 && alnum(byte(r)) || r == '.') }) {
			return out, violation("ERR_7042", "cookie_prefix", "The cookie_prefix %s may contain only letters, digits and periods.", Quote(p))
		}
		out.CookiePrefix = p
	}
	if req.InactivityTimeout != nil {
		if err := seconds("inactivity_timeout", *req.InactivityTimeout, 0, MaxInactivityTimeout, "", "", "ERR_7092"); err != nil {
			return out, err
		}
		out.InactivityTimeout = *req.InactivityTimeout
	}
	if req.MaximumDuration != nil {
		if err := seconds("maximum_duration", *req.MaximumDuration, MinMaximumDuration, MaxMaximumDuration, "no limit", "ERR_7161", "ERR_7162"); err != nil {
			return out, err
		}
		out.MaximumDuration = *req.MaximumDuration
	}
	return out, nil
}

// seconds checks a duration member in seconds: not negative, and 0 (zeroMeans) or within
// least..most, with the codes for too short and too long.
func seconds(field string, v, least, most int64, zeroMeans, tooShort, tooLong string) error {
	switch {
	case v < 0:
		return uint32Value(field, v)
	case v != 0 && v < least:
		return violation(tooShort, field, "%s is 0 (%s) or at least %d seconds; got %d.", field, zeroMeans, least, v)
	case v > most:
		return violation(tooLong, field, "%s is at most one year (%d seconds); got %d.", field, most, v)
	}
	return nil
}

// OAuth checks an oauth module (§8.6): exactly one provider (ERR_7036/7037), its app and who
// may sign in, and the session members (cookie_prefix defaults to DefaultOAuthCookiePrefix).
// The response lists all eight providers, the unused ones null. auth_check_interval is 0 (not
// enforced) or within MinAuthCheckInterval..MaxAuthCheckInterval (ERR_7035/7158).
func OAuth(req *api.OAuthModuleRequest) (*api.OAuthModule, error) {
	s, err := session(&req.SessionFieldsRequest, DefaultOAuthCookiePrefix)
	if err != nil {
		return nil, err
	}
	out := &api.OAuthModule{SessionFields: s}
	if req.AuthCheckInterval != nil {
		if err := seconds("auth_check_interval", *req.AuthCheckInterval, MinAuthCheckInterval, MaxAuthCheckInterval, "not enforced", "ERR_7035", "ERR_7158"); err != nil {
			return nil, err
		}
		out.AuthCheckInterval = *req.AuthCheckInterval
	}
	p := req.Provider
	if p == nil {
		p = &api.OAuthProviderRequest{}
	}
	var gh *api.OAuthAppRequest
	if p.GitHub != nil {
		gh = &p.GitHub.OAuthAppRequest
	}
	given := map[string]*api.OAuthAppRequest{
		"github": gh, "facebook": p.Facebook, "microsoft": p.Microsoft, "google": p.Google,
		"linkedin": p.LinkedIn, "gitlab": p.GitLab, "twitch": p.Twitch, "amazon": p.Amazon,
	}
	var names []string
	for _, name := range OAuthProviders {
		if given[name] != nil {
			names = append(names, name)
		}
	}
	switch len(names) {
	case 0:
		return nil, violation("ERR_7037", "provider", "An oauth module needs one provider: one of %s.", strings.Join(OAuthProviders, ", "))
	case 1:
	default:
		return nil, violation("ERR_7036", "provider", "An oauth module has exactly one provider; got %s.", strings.Join(names, ", "))
	}
	name := names[0]
	app, err := oauthApp(name, given[name])
	if err != nil {
		return nil, err
	}
	switch name {
	case "github":
		field := "provider.github."
		teams, err := authList(field+"teams", "teams", teamCodes, MaxAuthListEntries, MaxAuthValueBytes, p.GitHub.Teams, func(t string) error {
			if !githubTeam(t) {
				return violation("ERR_7040", field+"teams", "The team %s must be a numeric team ID or an organization and team slug, org/team.", Quote(t))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		orgs, err := authList(field+"organizations", "organizations", orgCodes, MaxAuthListEntries, MaxAuthValueBytes, p.GitHub.Organizations, func(o string) error {
			if !githubSlug(o, false) {
				return violation("ERR_215", field+"organizations", "The organization %s is not a valid organization slug (letters, digits and hyphens).", Quote(o))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out.Provider.GitHub = &api.OAuthGitHub{OAuthApp: *app, Teams: teams, Organizations: orgs}
	case "facebook":
		out.Provider.Facebook = app
	case "microsoft":
		out.Provider.Microsoft = app
	case "google":
		out.Provider.Google = app
	case "linkedin":
		out.Provider.LinkedIn = app
	case "gitlab":
		out.Provider.GitLab = app
	case "twitch":
		out.Provider.Twitch = app
	case "amazon":
		out.Provider.Amazon = app
	}
	return out, nil
}

// oauthApp checks one provider's app and allow lists. An empty client_id or client_secret
// counts as not sent. Messages never repeat the secret.
func oauthApp(name string, req *api.OAuthAppRequest) (*api.OAuthApp, error) {
	field := "provider." + name + "."
	id, secret := nonEmpty(req.ClientID), nonEmpty(req.ClientSecret)
	switch {
	case (id == nil) != (secret == nil):
		return nil, violation("ERR_7033", field+"client_id", "Your own OAuth app needs both client_id and client_secret; send both, or neither to use the managed app.")
	case id == nil && slices.Contains(NoManagedApp, name):
		return nil, violation("ERR_7166", field+"client_id", "The %s provider has no managed app: client_id and client_secret are required.", name)
	case id == nil && len(req.Scopes) > 0:
		return nil, violation("ERR_7034", field+"scopes", "scopes may be set only with your own OAuth app (client_id and client_secret).")
	}
	if id != nil {
		if len(*id) > MaxClientIDBytes {
			return nil, violation("ERR_7137", field+"client_id", "The client_id is %d bytes long; the maximum is %d bytes.", len(*id), MaxClientIDBytes)
		}
		if err := Identifier("ERR_215", field+"client_id", *id); err != nil {
			return nil, err
		}
		if err := clientSecret(field+"client_secret", *secret); err != nil {
			return nil, err
		}
	}
	scopes, err := authList(field+"scopes", "scopes", scopeCodes, MaxAuthListEntries, MaxAuthValueBytes, req.Scopes, nil)
	if err != nil {
		return nil, err
	}
	emails, domains, err := emailRules(field, req.EmailAddresses, req.EmailDomains)
	if err != nil {
		return nil, err
	}
	return &api.OAuthApp{ClientID: id, ClientSecret: secret, Scopes: scopes, EmailAddresses: emails, EmailDomains: domains}, nil
}

// emailRules checks the e-mail allow lists of an oauth provider or an oidc module, whose
// members are named field+"email_addresses" and field+"email_domains"; [] when not sent.
func emailRules(field string, emails, domains []string) ([]string, []string, error) {
	emails, err := authList(field+"email_addresses", "e-mail addresses", emailCodes, MaxEmailAddresses, MaxEmailAddressBytes, emails, func(e string) error { return emailAddress(field+"email_addresses", e) })
	if err != nil {
		return nil, nil, err
	}
	domains, err = authList(field+"email_domains", "e-mail domains", domainCodes, MaxAuthListEntries, MaxEmailDomainBytes, domains, func(d string) error { return emailDomain(field+"email_domains", d) })
	if err != nil {
		return nil, nil, err
	}
	return emails, domains, nil
}

func nonEmpty(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	v := *p
	return &v
}

// clientSecret checks a client secret's length and characters without ever quoting it.
func clientSecret(field, secret string) error {
	if len(secret) > MaxClientSecretBytes {
		return violation("ERR_7138", field, "The client_secret is %d bytes long; the maximum is %d bytes.", len(secret), MaxClientSecretBytes)
	}
	if badChar(secret, noneAllowed) != "" {
		return violation("ERR_215", field, "The client_secret contains a control character or invalid UTF-8.")
	}
	return nil
}

// emailAddress checks one allowed address: lowercase (ERR_7067), local@domain (ERR_7043),
// its domain valid punycode where it is (ERR_7044).
func emailAddress(field, e string) error {
	if e != strings.ToLower(e) {
		return violation("ERR_7067", field, "The e-mail address %s must be lowercase.", Quote(e))
	}
	local, domain, ok := strings.Cut(e, "@")
	if !ok || local == "" || strings.ContainsAny(local, "@ \t") || !hostname(domain, false) || !strings.Contains(domain, ".") {
		return violation("ERR_7043", field, "%s is not a valid e-mail address.", Quote(e))
	}
	if !punycode(domain) {
		return violation("ERR_7044", field, "The domain of the e-mail address %s is not valid punycode.", Quote(e))
	}
	return nil
}

// emailDomain checks one allowed domain: lowercase (ERR_7068), a valid domain name (ERR_7039),
// valid punycode where it is (ERR_7045).
func emailDomain(field, d string) error {
	if d != strings.ToLower(d) {
		return violation("ERR_7068", field, "The e-mail domain %s must be lowercase.", Quote(d))
	}
	if !hostname(d, false) || !strings.Contains(d, ".") {
		return violation("ERR_7039", field, "%s is not a valid e-mail domain.", Quote(d))
	}
	if !punycode(d) {
		return violation("ERR_7045", field, "The e-mail domain %s is not valid punycode.", Quote(d))
	}
	return nil
}

// punycode reports whether the xn-- labels of a domain decode to a name IDNA allows.
func punycode(domain string) bool {
	if !strings.Contains(domain, "xn--") {
		return true
	}
	_, err := idna.Lookup.ToUnicode(domain)
	return err == nil
}

// githubTeam reports whether t is a numeric team ID or an org/team slug pair.
func githubTeam(t string) bool {
	if strings.Trim(t, "0123456789") == "" {
		return true
	}
	org, team, ok := strings.Cut(t, "/")
	return ok && githubSlug(org, false) && githubSlug(team, true)
}

// githubSlug: letters, digits and hyphens; team slugs also take underscores and periods.
func githubSlug(s string, team bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(alnum(c) || c == '-' || team && (c == '_' || c == '.')) {
			return false
		}
	}
	return true
}

// OIDC checks an oidc module (§8.6): issuer, client_id and client_secret required
// (ERR_7088/7089/7090), the issuer an absolute http(s) URL (ERR_215) of at most
// MaxIssuerBytes (ERR_7087); email_addresses and email_domains (our extension) as an OAuth
// provider's; cookie_prefix defaults to "".
func OIDC(req *api.OIDCModuleRequest) (*api.OIDCModule, error) {
	s, err := session(&req.SessionFieldsRequest, "")
	if err != nil {
		return nil, err
	}
	switch {
	case req.Issuer == nil || *req.Issuer == "":
		return nil, violation("ERR_7088", "issuer", "The OIDC issuer is required.")
	case req.ClientID == nil || *req.ClientID == "":
		return nil, violation("ERR_7089", "client_id", "The OIDC client_id is required.")
	case req.ClientSecret == nil || *req.ClientSecret == "":
		return nil, violation("ERR_7090", "client_secret", "The OIDC client_secret is required.")
	}
	issuer := *req.Issuer
	if len(issuer) > MaxIssuerBytes {
		return nil, violation("ERR_7087", "issuer", "The OIDC issuer is %d bytes long; the maximum is %d bytes.", len(issuer), MaxIssuerBytes)
	}
	if u, err := url.Parse(issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || badChar(issuer, noneAllowed) != "" {
		return nil, violation("ERR_215", "issuer", "The OIDC issuer %s must be an absolute https:// (or http://) URL.", Quote(issuer))
	}
	if len(*req.ClientID) > MaxClientIDBytes {
		return nil, violation("ERR_7137", "client_id", "The client_id is %d bytes long; the maximum is %d bytes.", len(*req.ClientID), MaxClientIDBytes)
	}
	if err := Identifier("ERR_215", "client_id", *req.ClientID); err != nil {
		return nil, err
	}
	if err := clientSecret("client_secret", *req.ClientSecret); err != nil {
		return nil, err
	}
	scopes, err := authList("scopes", "scopes", scopeCodes, MaxAuthListEntries, MaxAuthValueBytes, req.Scopes, nil)
	if err != nil {
		return nil, err
	}
	emails, domains, err := emailRules("", req.EmailAddresses, req.EmailDomains)
	if err != nil {
		return nil, err
	}
	return &api.OIDCModule{SessionFields: s, Issuer: issuer, ClientID: *req.ClientID, ClientSecret: *req.ClientSecret, Scopes: scopes, EmailAddresses: emails, EmailDomains: domains}, nil
}

// SAML checks a saml module (§8.6): idp_metadata required (ERR_7091), at most
// MaxSAMLMetadataBytes (ERR_7080), an XML EntityDescriptor (or an EntitiesDescriptor holding
// one) with an IDPSSODescriptor (ERR_7083); nameid_format one of SAMLNameIDFormats
// (ERR_1693). Defaults: force_authn false, allow_idp_initiated true, authorized_groups [],
// nameid_format persistent, cookie_prefix "". The derived members stay empty: the server
// fills them from the route.
func SAML(req *api.SAMLModuleRequest) (*api.SAMLModule, error) {
	s, err := session(&req.SessionFieldsRequest, "")
	if err != nil {
		return nil, err
	}
	if req.IdPMetadata == nil || strings.TrimSpace(*req.IdPMetadata) == "" {
		return nil, violation("ERR_7091", "idp_metadata", "The SAML idp_metadata is required: the identity provider's metadata XML (an EntityDescriptor).")
	}
	md := *req.IdPMetadata
	if len(md) > MaxSAMLMetadataBytes {
		return nil, violation("ERR_7080", "idp_metadata", "The SAML idp_metadata is %d bytes long; the maximum is %d bytes.", len(md), MaxSAMLMetadataBytes)
	}
	if _, err := IdPEntityDescriptor(md); err != nil {
		return nil, violation("ERR_7083", "idp_metadata", "The SAML idp_metadata is not usable IdP metadata: %s.", Clip(err.Error()))
	}
	out := &api.SAMLModule{
		SessionFields:     s,
		IdPMetadata:       md,
		AllowIdPInitiated: true,
		NameIDFormat:      DefaultSAMLNameIDFormat,
	}
	if req.ForceAuthn != nil {
		out.ForceAuthn = *req.ForceAuthn
	}
	if req.AllowIdPInitiated != nil {
		out.AllowIdPInitiated = *req.AllowIdPInitiated
	}
	if req.NameIDFormat != nil {
		if !slices.Contains(SAMLNameIDFormats, *req.NameIDFormat) {
			return nil, violation("ERR_1693", "nameid_format", "The nameid_format %s is not supported; supported formats are %s.", Quote(*req.NameIDFormat), strings.Join(SAMLNameIDFormats, ", "))
		}
		out.NameIDFormat = *req.NameIDFormat
	}
	if out.AuthorizedGroups, err = authList("authorized_groups", "groups", groupCodes, MaxAuthListEntries, MaxAuthValueBytes, req.AuthorizedGroups, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// IdPEntityDescriptor parses SAML IdP metadata: an EntityDescriptor, or an EntitiesDescriptor
// holding exactly one, that has an IDPSSODescriptor whose signing certificates parse. The
// server uses it to fill the derived members.
func IdPEntityDescriptor(metadata string) (*saml.EntityDescriptor, error) {
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal([]byte(metadata), &root); err != nil {
		return nil, xmlError(err)
	}
	var ed *saml.EntityDescriptor
	switch root.XMLName.Local {
	case "EntityDescriptor":
		ed = &saml.EntityDescriptor{}
		if err := xml.NewDecoder(bytes.NewReader([]byte(metadata))).Decode(ed); err != nil {
			return nil, xmlError(err)
		}
	case "EntitiesDescriptor":
		var eds saml.EntitiesDescriptor
		if err := xml.Unmarshal([]byte(metadata), &eds); err != nil {
			return nil, xmlError(err)
		}
		if len(eds.EntityDescriptors) != 1 || len(eds.EntitiesDescriptors) != 0 {
			return nil, errors.New("an EntitiesDescriptor must hold exactly one EntityDescriptor")
		}
		ed = &eds.EntityDescriptors[0]
	default:
		return nil, errors.New("the root element must be an EntityDescriptor of the SAML 2.0 metadata namespace")
	}
	if ed.EntityID == "" {
		return nil, errors.New("the EntityDescriptor has no entityID")
	}
	if len(ed.IDPSSODescriptors) == 0 {
		return nil, errors.New("the EntityDescriptor has no IDPSSODescriptor")
	}
	if err := idpSigningCertificates(ed); err != nil {
		return nil, err
	}
	return ed, nil
}

// idpSigningCertificates checks that every certificate the IdP signs with parses: a key
// descriptor without `use` serves for signing too (SAML metadata §2.4.1.1). One that does not
// parse would make every assertion fail to verify long after the module was accepted.
func idpSigningCertificates(ed *saml.EntityDescriptor) error {
	for _, sso := range ed.IDPSSODescriptors {
		for _, kd := range sso.KeyDescriptors {
			if kd.Use != "" && kd.Use != "signing" {
				continue
			}
			for _, c := range kd.KeyInfo.X509Data.X509Certificates {
				der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
				if err == nil {
					_, err = x509.ParseCertificate(der)
				}
				if err != nil {
					return fmt.Errorf("the IDPSSODescriptor's signing certificate is not a base64 DER X.509 certificate (%v)", err)
				}
			}
		}
	}
	return nil
}

// xmlError reports an XML error without its raw input; encoding/xml's messages name the
// element or line, not the document.
func xmlError(err error) error {
	return errors.New("it is not well-formed SAML metadata XML: " + err.Error())
}
