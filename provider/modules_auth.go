package provider

import (
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

// The authentication modules: oauth, oidc and saml share the session members.

type sessionModel struct {
	Enabled            types.Bool   `tfsdk:"enabled"`
	OptionsPassthrough types.Bool   `tfsdk:"options_passthrough"`
	CookiePrefix       types.String `tfsdk:"cookie_prefix"`
	InactivityTimeout  types.Int64  `tfsdk:"inactivity_timeout"`
	MaximumDuration    types.Int64  `tfsdk:"maximum_duration"`
}

func sessionMembers(cookiePrefix string) []member {
	return []member{
		enabledMember(),
		{name: "options_passthrough", kind: kindBool, def: false, desc: "Let OPTIONS requests through without authentication (CORS preflights)."},
		{name: "cookie_prefix", kind: kindString, def: cookiePrefix, desc: "Prefix of the session cookies' names: letters, digits and periods."},
		{name: "inactivity_timeout", kind: kindInt, def: int64(0), desc: "Seconds without a request after which the session ends; 0: not enforced."},
		{name: "maximum_duration", kind: kindInt, def: int64(0), desc: "Seconds after which a session ends; 0: not enforced."},
	}
}

func (m sessionModel) request() api.SessionFieldsRequest {
	return api.SessionFieldsRequest{
		Enabled: boolPtr(m.Enabled), OptionsPassthrough: boolPtr(m.OptionsPassthrough), CookiePrefix: optional(m.CookiePrefix),
		InactivityTimeout: int64Ptr(m.InactivityTimeout), MaximumDuration: int64Ptr(m.MaximumDuration),
	}
}

func sessionOf(s api.SessionFields) sessionModel {
	return sessionModel{
		Enabled: types.BoolValue(s.Enabled), OptionsPassthrough: types.BoolValue(s.OptionsPassthrough), CookiePrefix: types.StringValue(s.CookiePrefix),
		InactivityTimeout: types.Int64Value(s.InactivityTimeout), MaximumDuration: types.Int64Value(s.MaximumDuration),
	}
}

// oauthAppModel is one OAuth provider's settings.
type oauthAppModel struct {
	ClientID              types.String `tfsdk:"client_id"`
	ClientSecret          types.String `tfsdk:"client_secret"`
	ClientSecretWO        types.String `tfsdk:"client_secret_wo"`
	ClientSecretWOVersion types.Int64  `tfsdk:"client_secret_wo_version"`
	Scopes                types.List   `tfsdk:"scopes"`
	EmailAddresses        types.List   `tfsdk:"email_addresses"`
	EmailDomains          types.List   `tfsdk:"email_domains"`
}

type oauthGitHubModel struct {
	oauthAppModel
	Teams         types.List `tfsdk:"teams"`
	Organizations types.List `tfsdk:"organizations"`
}

type oauthProviderModel struct {
	GitHub    *oauthGitHubModel `tfsdk:"github"`
	Facebook  *oauthAppModel    `tfsdk:"facebook"`
	Microsoft *oauthAppModel    `tfsdk:"microsoft"`
	Google    *oauthAppModel    `tfsdk:"google"`
	LinkedIn  *oauthAppModel    `tfsdk:"linkedin"`
	GitLab    *oauthAppModel    `tfsdk:"gitlab"`
	Twitch    *oauthAppModel    `tfsdk:"twitch"`
	Amazon    *oauthAppModel    `tfsdk:"amazon"`
}

// apps lists the providers in rules.OAuthProviders' order.
func (p *oauthProviderModel) apps() []*oauthAppModel {
	var gh *oauthAppModel
	if p.GitHub != nil {
		gh = &p.GitHub.oauthAppModel
	}
	return []*oauthAppModel{gh, p.Facebook, p.Microsoft, p.Google, p.LinkedIn, p.GitLab, p.Twitch, p.Amazon}
}

type oauthModuleModel struct {
	sessionModel
	AuthCheckInterval types.Int64         `tfsdk:"auth_check_interval"`
	Provider          *oauthProviderModel `tfsdk:"provider"`
}

func oauthAppMembers() []member {
	return slices.Concat([]member{
		{name: "client_id", kind: kindString, desc: "Your own OAuth app's client ID; without it (and the secret) the service's managed app is used (not for amazon and facebook)."},
	}, secretMembers("client_secret", "OAuth app's client secret; given with `client_id`"), []member{
		{name: "scopes", kind: kindStrings, desc: "Scopes to request beside those the edge needs to read the identity; only with your own app."},
	}, emailRuleMembers())
}

// emailRuleMembers are the e-mail allow lists of an OAuth provider and of the oidc module.
func emailRuleMembers() []member {
	return []member{
		{name: "email_addresses", kind: kindStrings, desc: "Lowercase e-mail addresses allowed to sign in (the provider's verified address). Any one rule admits; with no rule set, anyone who signs in at the provider is admitted."},
		{name: "email_domains", kind: kindStrings, desc: "Lowercase e-mail domains allowed to sign in (the domain of the verified address)."},
	}
}

func oauthProviderMembers() []member {
	out := []member{{name: "github", kind: kindObject, desc: "GitHub.", members: append(oauthAppMembers(),
		member{name: "teams", kind: kindStrings, desc: "Teams (`org/team` or a numeric ID) whose members may sign in."},
		member{name: "organizations", kind: kindStrings, desc: "Organizations whose members may sign in."},
	)}}
	for _, name := range rules.OAuthProviders[1:] {
		out = append(out, member{name: name, kind: kindObject, members: oauthAppMembers(), desc: "The " + name + " provider."})
	}
	return out
}

// oauthAppRules: client_id and the secret (as a value or write-only) come both or neither,
// scopes need them; amazon and facebook need them (no managed app).
func oauthAppRules(at path.Path, ownApp bool) []validators.Members {
	p := func(name string) path.Path { return validators.Join(at, path.Root(name)) }
	out := append(secretRules(at, "client_secret"),
		validators.RequiresOneOf(p("client_id"), p("client_secret"), p("client_secret_wo")),
		validators.AlsoRequires(p("client_secret"), p("client_id")),
		validators.AlsoRequires(p("client_secret_wo"), p("client_id")),
		validators.AlsoRequires(p("scopes"), p("client_id")),
	)
	for i := range out {
		out[i] = out[i].Within(at)
	}
	if ownApp {
		out = append(out, validators.ExactlyOneOf(p("client_id")).Within(at))
	}
	return out
}

func oauthRules() []validators.Members {
	provider := path.Root("provider")
	var all []path.Path
	for _, name := range rules.OAuthProviders {
		all = append(all, provider.AtName(name))
	}
	out := []validators.Members{validators.ExactlyOneOf(all...).Within(provider)}
	for _, name := range rules.OAuthProviders {
		out = append(out, oauthAppRules(provider.AtName(name), name == "amazon" || name == "facebook")...)
	}
	return out
}

func (m *oauthAppModel) request(config *oauthAppModel) api.OAuthAppRequest {
	var wo types.String
	if config != nil {
		wo = config.ClientSecretWO
	}
	return api.OAuthAppRequest{
		ClientID: optional(m.ClientID), ClientSecret: secretOf(m.ClientSecret, wo),
		Scopes: stringsOf(m.Scopes), EmailAddresses: stringsOf(m.EmailAddresses), EmailDomains: stringsOf(m.EmailDomains),
	}
}

func oauthAppOf(r *api.OAuthApp, prior *oauthAppModel) oauthAppModel {
	if prior == nil {
		return oauthAppModel{ClientID: types.StringPointerValue(r.ClientID), ClientSecret: secretValue(r.ClientSecret, types.StringNull(), true),
			ClientSecretWO: types.StringNull(), ClientSecretWOVersion: types.Int64Null(),
			Scopes: stringList(r.Scopes), EmailAddresses: stringList(r.EmailAddresses), EmailDomains: stringList(r.EmailDomains)}
	}
	list := func(items []string, p types.List) types.List {
		return listValue(items, &p, func(l *types.List) types.List { return *l })
	}
	return oauthAppModel{
		ClientID: types.StringPointerValue(r.ClientID), ClientSecret: secretValue(r.ClientSecret, prior.ClientSecret, false),
		ClientSecretWO: types.StringNull(), ClientSecretWOVersion: prior.ClientSecretWOVersion,
		Scopes: list(r.Scopes, prior.Scopes), EmailAddresses: list(r.EmailAddresses, prior.EmailAddresses), EmailDomains: list(r.EmailDomains, prior.EmailDomains),
	}
}

var oauthModule = module[oauthModuleModel, api.OAuthModuleRequest, api.OAuthModule]{
	members: append(sessionMembers(rules.DefaultOAuthCookiePrefix),
		member{name: "auth_check_interval", kind: kindInt, def: int64(0), desc: "Seconds after which the user is read again at the provider's user API with the sign-in's access token; a token the provider refuses, or an identity the rules no longer admit, ends the session. 0: never checked again."},
		member{name: "provider", kind: kindObject, required: true, members: oauthProviderMembers(), desc: "The identity provider: exactly one member."},
	),
	expand: func(m, config *oauthModuleModel) *api.OAuthModuleRequest {
		out := &api.OAuthModuleRequest{SessionFieldsRequest: m.sessionModel.request(), AuthCheckInterval: int64Ptr(m.AuthCheckInterval)}
		if m.Provider == nil {
			return out
		}
		var configApps []*oauthAppModel
		if config != nil && config.Provider != nil {
			configApps = config.Provider.apps()
		}
		out.Provider = &api.OAuthProviderRequest{}
		targets := []**api.OAuthAppRequest{nil, &out.Provider.Facebook, &out.Provider.Microsoft, &out.Provider.Google, &out.Provider.LinkedIn, &out.Provider.GitLab, &out.Provider.Twitch, &out.Provider.Amazon}
		for i, app := range m.Provider.apps() {
			if app == nil {
				continue
			}
			var c *oauthAppModel
			if configApps != nil {
				c = configApps[i]
			}
			r := app.request(c)
			if i == 0 {
				out.Provider.GitHub = &api.OAuthGitHubRequest{OAuthAppRequest: r, Teams: stringsOf(m.Provider.GitHub.Teams), Organizations: stringsOf(m.Provider.GitHub.Organizations)}
				continue
			}
			*targets[i] = &r
		}
		return out
	},
	flatten: func(r *api.OAuthModule, prior *oauthModuleModel) oauthModuleModel {
		out := oauthModuleModel{sessionModel: sessionOf(r.SessionFields), AuthCheckInterval: types.Int64Value(r.AuthCheckInterval), Provider: &oauthProviderModel{}}
		var priorApps []*oauthAppModel
		if prior != nil && prior.Provider != nil {
			priorApps = prior.Provider.apps()
		}
		priorApp := func(i int) *oauthAppModel {
			if prior == nil {
				return nil
			}
			if priorApps == nil || priorApps[i] == nil {
				return &oauthAppModel{}
			}
			return priorApps[i]
		}
		p := r.Provider
		if p.GitHub != nil {
			gh := &oauthGitHubModel{oauthAppModel: oauthAppOf(&p.GitHub.OAuthApp, priorApp(0)), Teams: stringList(p.GitHub.Teams), Organizations: stringList(p.GitHub.Organizations)}
			if prior != nil {
				var pg oauthGitHubModel
				if prior.Provider != nil && prior.Provider.GitHub != nil {
					pg = *prior.Provider.GitHub
				}
				gh.Teams = listValue(p.GitHub.Teams, &pg, func(m *oauthGitHubModel) types.List { return m.Teams })
				gh.Organizations = listValue(p.GitHub.Organizations, &pg, func(m *oauthGitHubModel) types.List { return m.Organizations })
			}
			out.Provider.GitHub = gh
		}
		targets := []**oauthAppModel{nil, &out.Provider.Facebook, &out.Provider.Microsoft, &out.Provider.Google, &out.Provider.LinkedIn, &out.Provider.GitLab, &out.Provider.Twitch, &out.Provider.Amazon}
		for i, app := range []*api.OAuthApp{nil, p.Facebook, p.Microsoft, p.Google, p.LinkedIn, p.GitLab, p.Twitch, p.Amazon} {
			if app != nil {
				v := oauthAppOf(app, priorApp(i))
				*targets[i] = &v
			}
		}
		return out
	},
	rules: oauthRules(),
	check: func(r *api.OAuthModuleRequest) error { _, err := rules.OAuth(r); return err },
}

type oidcModuleModel struct {
	sessionModel
	Issuer                types.String `tfsdk:"issuer"`
	ClientID              types.String `tfsdk:"client_id"`
	ClientSecret          types.String `tfsdk:"client_secret"`
	ClientSecretWO        types.String `tfsdk:"client_secret_wo"`
	ClientSecretWOVersion types.Int64  `tfsdk:"client_secret_wo_version"`
	Scopes                types.List   `tfsdk:"scopes"`
	EmailAddresses        types.List   `tfsdk:"email_addresses"`
	EmailDomains          types.List   `tfsdk:"email_domains"`
}

var oidcModule = module[oidcModuleModel, api.OIDCModuleRequest, api.OIDCModule]{
	members: slices.Concat(sessionMembers(""), []member{
		{name: "issuer", kind: kindString, required: true, desc: "The OpenID Connect issuer URL."},
		{name: "client_id", kind: kindString, required: true, desc: "The client ID at the issuer."},
	}, secretMembers("client_secret", "client secret at the issuer; required (as a value or write-only)"), []member{
		{name: "scopes", kind: kindStrings, desc: "Scopes to request; `openid` is always asked for (`openid email profile` when empty)."},
	}, emailRuleMembers()),
	expand: func(m, config *oidcModuleModel) *api.OIDCModuleRequest {
		var wo types.String
		if config != nil {
			wo = config.ClientSecretWO
		}
		return &api.OIDCModuleRequest{SessionFieldsRequest: m.sessionModel.request(), Issuer: optional(m.Issuer), ClientID: optional(m.ClientID), ClientSecret: secretOf(m.ClientSecret, wo), Scopes: stringsOf(m.Scopes),
			EmailAddresses: stringsOf(m.EmailAddresses), EmailDomains: stringsOf(m.EmailDomains)}
	},
	flatten: func(r *api.OIDCModule, prior *oidcModuleModel) oidcModuleModel {
		secret := &r.ClientSecret
		out := oidcModuleModel{sessionModel: sessionOf(r.SessionFields), Issuer: types.StringValue(r.Issuer), ClientID: types.StringValue(r.ClientID),
			ClientSecretWO: types.StringNull(), Scopes: listValue(r.Scopes, prior, func(m *oidcModuleModel) types.List { return m.Scopes }),
			EmailAddresses: listValue(r.EmailAddresses, prior, func(m *oidcModuleModel) types.List { return m.EmailAddresses }),
			EmailDomains:   listValue(r.EmailDomains, prior, func(m *oidcModuleModel) types.List { return m.EmailDomains })}
		out.ClientSecret, out.ClientSecretWOVersion = secretState(secret, prior, func(m *oidcModuleModel) (types.String, types.Int64) { return m.ClientSecret, m.ClientSecretWOVersion })
		return out
	},
	rules: append(secretRules(path.Empty(), "client_secret"), validators.ExactlyOneOf(path.Root("client_secret"), path.Root("client_secret_wo"))),
	check: func(r *api.OIDCModuleRequest) error { _, err := rules.OIDC(r); return err },
}

type samlModuleModel struct {
	sessionModel
	IdPMetadata                  types.String `tfsdk:"idp_metadata"`
	ForceAuthn                   types.Bool   `tfsdk:"force_authn"`
	AllowIdPInitiated            types.Bool   `tfsdk:"allow_idp_initiated"`
	AuthorizedGroups             types.List   `tfsdk:"authorized_groups"`
	NameIDFormat                 types.String `tfsdk:"nameid_format"`
	EntityID                     types.String `tfsdk:"entity_id"`
	AssertionConsumerServiceURL  types.String `tfsdk:"assertion_consumer_service_url"`
	SingleLogoutURL              types.String `tfsdk:"single_logout_url"`
	RequestSigningCertificatePEM types.String `tfsdk:"request_signing_certificate_pem"`
	MetadataURL                  types.String `tfsdk:"metadata_url"`
	IdPMetadataURL               types.String `tfsdk:"idp_metadata_url"`
}

var samlModule = module[samlModuleModel, api.SAMLModuleRequest, api.SAMLModule]{
	members: append(sessionMembers(""),
		member{name: "idp_metadata", kind: kindString, required: true, desc: "The identity provider's metadata XML (an `EntityDescriptor`)."},
		member{name: "force_authn", kind: kindBool, def: false, desc: "Ask the identity provider to authenticate the user again at every sign-in (`ForceAuthn` in the request), even when it has a session of its own."},
		member{name: "allow_idp_initiated", kind: kindBool, def: true, desc: "Accept sign-ins the identity provider starts (unsolicited responses); when false they are refused (403 `ERR_8041`)."},
		member{name: "authorized_groups", kind: kindStrings, desc: "Groups whose members may sign in, matched against the assertion's group attribute (see Traffic); a user in none of them is refused (403 `ERR_8040`). None: everyone the identity provider admits."},
		member{name: "nameid_format", kind: kindString, def: rules.DefaultSAMLNameIDFormat, desc: "The NameID format requested (`NameIDPolicy` in the request); the NameID is the user's ID the upstream receives."},
		member{name: "entity_id", kind: kindString, derived: true, desc: "The service provider's entity ID, derived from the route: `<API base URL>/saml/<route id>`."},
		member{name: "assertion_consumer_service_url", kind: kindString, derived: true, desc: "Where the identity provider posts its responses (HTTP-POST binding): `<entity_id>/acs`."},
		member{name: "single_logout_url", kind: kindString, derived: true, desc: "The single logout URL (`<entity_id>/slo`): a logout request of the identity provider ends the user's sessions on the route."},
		member{name: "request_signing_certificate_pem", kind: kindString, derived: true, desc: "The certificate the service signs its requests with (generated per route)."},
		member{name: "metadata_url", kind: kindString, derived: true, desc: "The service provider's metadata URL (the entity ID): the XML to give the identity provider, with the URLs and the signing certificate."},
		member{name: "idp_metadata_url", kind: kindString, derived: true, desc: "The identity provider's metadata URL (empty when the metadata was given inline)."},
	),
	expand: func(m, _ *samlModuleModel) *api.SAMLModuleRequest {
		return &api.SAMLModuleRequest{SessionFieldsRequest: m.sessionModel.request(), IdPMetadata: optional(m.IdPMetadata), ForceAuthn: boolPtr(m.ForceAuthn),
			AllowIdPInitiated: boolPtr(m.AllowIdPInitiated), AuthorizedGroups: stringsOf(m.AuthorizedGroups), NameIDFormat: optional(m.NameIDFormat)}
	},
	flatten: func(r *api.SAMLModule, prior *samlModuleModel) samlModuleModel {
		return samlModuleModel{sessionModel: sessionOf(r.SessionFields), IdPMetadata: types.StringValue(r.IdPMetadata), ForceAuthn: types.BoolValue(r.ForceAuthn),
			AllowIdPInitiated: types.BoolValue(r.AllowIdPInitiated), AuthorizedGroups: listValue(r.AuthorizedGroups, prior, func(m *samlModuleModel) types.List { return m.AuthorizedGroups }),
			NameIDFormat: types.StringValue(r.NameIDFormat), EntityID: types.StringValue(r.EntityID), AssertionConsumerServiceURL: types.StringValue(r.AssertionConsumerServiceURL),
			SingleLogoutURL: types.StringValue(r.SingleLogoutURL), RequestSigningCertificatePEM: types.StringValue(r.RequestSigningCertificatePEM),
			MetadataURL: types.StringValue(r.MetadataURL), IdPMetadataURL: types.StringValue(r.IdPMetadataURL)}
	},
	check: func(r *api.SAMLModuleRequest) error { _, err := rules.SAML(r); return err },
}
