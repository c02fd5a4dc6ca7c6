package api

// Edge and route modules (details.md §6.10, §6.11, §8). A module is null on its owner until it
// is configured. Its request form (sent in a create or PATCH of the owner, or as the flat body
// of PUT <owner>/<module>) uses pointers, so that an omitted member can be told from a given
// one: an omitted `enabled` means true (§8.1). The response form has no pointers, except
// where the API answers null. Request and response differ only for backend, ip_restriction,
// mutual_tls (IDs in, Refs out) and saml (derived members out).

// BackendModule is the backend module of a TCP or TLS edge or an HTTPS route.
type BackendModule struct {
	Enabled bool `json:"enabled"`
	Backend Ref  `json:"backend"`
}

// BackendModuleRequest configures a backend module.
type BackendModuleRequest struct {
	Enabled   *bool   `json:"enabled,omitempty"`
	BackendID *string `json:"backend_id,omitempty"`
}

// IPRestrictionModule lets through only the source addresses its IP policies allow.
type IPRestrictionModule struct {
	Enabled    bool  `json:"enabled"`
	IPPolicies []Ref `json:"ip_policies"`
}

// IPRestrictionModuleRequest configures an ip_restriction module.
type IPRestrictionModuleRequest struct {
	Enabled     *bool    `json:"enabled,omitempty"`
	IPPolicyIDs []string `json:"ip_policy_ids"`
}

// MutualTLSModule asks clients for a certificate signed by one of its authorities.
type MutualTLSModule struct {
	Enabled                bool  `json:"enabled"`
	CertificateAuthorities []Ref `json:"certificate_authorities"`
}

// MutualTLSModuleRequest configures a mutual_tls module.
type MutualTLSModuleRequest struct {
	Enabled                 *bool    `json:"enabled,omitempty"`
	CertificateAuthorityIDs []string `json:"certificate_authority_ids"`
}

// TLSTerminationModule says where TLS ends and its minimum version. On HTTPS edges
// terminate_at is always "edge" and cannot be set.
type TLSTerminationModule struct {
	Enabled     bool    `json:"enabled"`
	TerminateAt string  `json:"terminate_at" enum:"terminate_at"`
	MinVersion  *string `json:"min_version" enum:"tls_version"`
}

// TLSTerminationModuleRequest configures a tls_termination module.
type TLSTerminationModuleRequest struct {
	Enabled     *bool   `json:"enabled,omitempty"`
	TerminateAt *string `json:"terminate_at,omitempty" enum:"terminate_at"`
	MinVersion  *string `json:"min_version,omitempty" enum:"tls_version"`
}

// TrafficPolicyModule holds a traffic policy document (JSON or YAML) as a string.
type TrafficPolicyModule struct {
	Enabled bool   `json:"enabled"`
	Value   string `json:"value"`
}

// TrafficPolicyModuleRequest configures a traffic_policy module.
type TrafficPolicyModuleRequest struct {
	Enabled *bool   `json:"enabled,omitempty"`
	Value   *string `json:"value,omitempty"`
}

// ToggleModule is a module with nothing but `enabled`: compression and
// websocket_tcp_converter.
type ToggleModule struct {
	Enabled bool `json:"enabled"`
}

// ToggleModuleRequest configures a compression or websocket_tcp_converter module.
type ToggleModuleRequest struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// CircuitBreakerModule stops sending traffic upstream while too many requests fail.
type CircuitBreakerModule struct {
	Enabled                  bool    `json:"enabled"`
	TrippedDuration          int64   `json:"tripped_duration"`
	RollingWindow            int64   `json:"rolling_window"`
	NumBuckets               int64   `json:"num_buckets"`
	VolumeThreshold          int64   `json:"volume_threshold"`
	ErrorThresholdPercentage float64 `json:"error_threshold_percentage"`
}

// CircuitBreakerModuleRequest configures a circuit_breaker module.
type CircuitBreakerModuleRequest struct {
	Enabled                  *bool    `json:"enabled,omitempty"`
	TrippedDuration          *int64   `json:"tripped_duration,omitempty"`
	RollingWindow            *int64   `json:"rolling_window,omitempty"`
	NumBuckets               *int64   `json:"num_buckets,omitempty"`
	VolumeThreshold          *int64   `json:"volume_threshold,omitempty"`
	ErrorThresholdPercentage *float64 `json:"error_threshold_percentage,omitempty"`
}

// HeadersModule adds and removes request or response headers. Keys of Add are lowercase in
// responses.
type HeadersModule struct {
	Enabled bool              `json:"enabled"`
	Add     map[string]string `json:"add"`
	Remove  []string          `json:"remove"`
}

// HeadersModuleRequest configures a request_headers or response_headers module.
type HeadersModuleRequest struct {
	Enabled *bool             `json:"enabled,omitempty"`
	Add     map[string]string `json:"add"`
	Remove  []string          `json:"remove"`
}

// WebhookVerificationModule checks the signature a webhook provider puts on its requests.
// The secret is returned in clear (details.md §8.8).
type WebhookVerificationModule struct {
	Enabled  bool   `json:"enabled"`
	Provider string `json:"provider"`
	Secret   string `json:"secret"`
}

// WebhookVerificationModuleRequest configures a webhook_verification module.
type WebhookVerificationModuleRequest struct {
	Enabled  *bool   `json:"enabled,omitempty"`
	Provider *string `json:"provider,omitempty"`
	Secret   *string `json:"secret,omitempty"`
}

// UserAgentFilterModule allows or denies requests by their User-Agent (RE2 patterns).
type UserAgentFilterModule struct {
	Enabled bool     `json:"enabled"`
	Allow   []string `json:"allow"`
	Deny    []string `json:"deny"`
}

// UserAgentFilterModuleRequest configures a user_agent_filter module.
type UserAgentFilterModuleRequest struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Allow   []string `json:"allow"`
	Deny    []string `json:"deny"`
}

// SessionFields are the members the three authentication modules share (api.md).
type SessionFields struct {
	Enabled            bool   `json:"enabled"`
	OptionsPassthrough bool   `json:"options_passthrough"`
	CookiePrefix       string `json:"cookie_prefix"`
	InactivityTimeout  int64  `json:"inactivity_timeout"`
	MaximumDuration    int64  `json:"maximum_duration"`
}

// SessionFieldsRequest is the request form of SessionFields.
type SessionFieldsRequest struct {
	Enabled            *bool   `json:"enabled,omitempty"`
	OptionsPassthrough *bool   `json:"options_passthrough,omitempty"`
	CookiePrefix       *string `json:"cookie_prefix,omitempty"`
	InactivityTimeout  *int64  `json:"inactivity_timeout,omitempty"`
	MaximumDuration    *int64  `json:"maximum_duration,omitempty"`
}

// OAuthModule signs users in with one OAuth identity provider.
type OAuthModule struct {
	SessionFields
	AuthCheckInterval int64         `json:"auth_check_interval"`
	Provider          OAuthProvider `json:"provider"`
}

// OAuthModuleRequest configures an oauth module.
type OAuthModuleRequest struct {
	SessionFieldsRequest
	AuthCheckInterval *int64                `json:"auth_check_interval,omitempty"`
	Provider          *OAuthProviderRequest `json:"provider,omitempty"`
}

// OAuthProvider has one member per identity provider; exactly one is set, the others null.
type OAuthProvider struct {
	GitHub    *OAuthGitHub `json:"github"`
	Facebook  *OAuthApp    `json:"facebook"`
	Microsoft *OAuthApp    `json:"microsoft"`
	Google    *OAuthApp    `json:"google"`
	LinkedIn  *OAuthApp    `json:"linkedin"`
	GitLab    *OAuthApp    `json:"gitlab"`
	Twitch    *OAuthApp    `json:"twitch"`
	Amazon    *OAuthApp    `json:"amazon"`
}

// OAuthProviderRequest is the request form of OAuthProvider.
type OAuthProviderRequest struct {
	GitHub    *OAuthGitHubRequest `json:"github,omitempty"`
	Facebook  *OAuthAppRequest    `json:"facebook,omitempty"`
	Microsoft *OAuthAppRequest    `json:"microsoft,omitempty"`
	Google    *OAuthAppRequest    `json:"google,omitempty"`
	LinkedIn  *OAuthAppRequest    `json:"linkedin,omitempty"`
	GitLab    *OAuthAppRequest    `json:"gitlab,omitempty"`
	Twitch    *OAuthAppRequest    `json:"twitch,omitempty"`
	Amazon    *OAuthAppRequest    `json:"amazon,omitempty"`
}

// OAuthApp is one provider's settings: the OAuth app (none: the service's managed app) and
// who may sign in. The client secret is returned in clear (details.md §8.6).
type OAuthApp struct {
	ClientID       *string  `json:"client_id"`
	ClientSecret   *string  `json:"client_secret"`
	Scopes         []string `json:"scopes"`
	EmailAddresses []string `json:"email_addresses"`
	EmailDomains   []string `json:"email_domains"`
}

// OAuthAppRequest is the request form of OAuthApp.
type OAuthAppRequest struct {
	ClientID       *string  `json:"client_id,omitempty"`
	ClientSecret   *string  `json:"client_secret,omitempty"`
	Scopes         []string `json:"scopes"`
	EmailAddresses []string `json:"email_addresses"`
	EmailDomains   []string `json:"email_domains"`
}

// OAuthGitHub adds teams and organizations to the GitHub provider.
type OAuthGitHub struct {
	OAuthApp
	Teams         []string `json:"teams"`
	Organizations []string `json:"organizations"`
}

// OAuthGitHubRequest is the request form of OAuthGitHub.
type OAuthGitHubRequest struct {
	OAuthAppRequest
	Teams         []string `json:"teams"`
	Organizations []string `json:"organizations"`
}

// OIDCModule signs users in with an OpenID Connect provider. The client secret is returned
// in clear (details.md §8.6). EmailAddresses and EmailDomains are our extension: the OAuth
// providers' allow lists, by the same names and rules.
type OIDCModule struct {
	SessionFields
	Issuer         string   `json:"issuer"`
	ClientID       string   `json:"client_id"`
	ClientSecret   string   `json:"client_secret"`
	Scopes         []string `json:"scopes"`
	EmailAddresses []string `json:"email_addresses"`
	EmailDomains   []string `json:"email_domains"`
}

// OIDCModuleRequest configures an oidc module.
type OIDCModuleRequest struct {
	SessionFieldsRequest
	Issuer         *string  `json:"issuer,omitempty"`
	ClientID       *string  `json:"client_id,omitempty"`
	ClientSecret   *string  `json:"client_secret,omitempty"`
	Scopes         []string `json:"scopes"`
	EmailAddresses []string `json:"email_addresses"`
	EmailDomains   []string `json:"email_domains"`
}

// SAMLModule signs users in with a SAML identity provider. The service derives the members
// after NameIDFormat from the route, and generates the request-signing certificate.
type SAMLModule struct {
	SessionFields
	IdPMetadata                  string   `json:"idp_metadata"`
	ForceAuthn                   bool     `json:"force_authn"`
	AllowIdPInitiated            bool     `json:"allow_idp_initiated"`
	AuthorizedGroups             []string `json:"authorized_groups"`
	NameIDFormat                 string   `json:"nameid_format" enum:"saml_nameid_format"`
	EntityID                     string   `json:"entity_id"`
	AssertionConsumerServiceURL  string   `json:"assertion_consumer_service_url"`
	SingleLogoutURL              string   `json:"single_logout_url"`
	RequestSigningCertificatePEM string   `json:"request_signing_certificate_pem"`
	MetadataURL                  string   `json:"metadata_url"`
	IdPMetadataURL               string   `json:"idp_metadata_url"`
}

// SAMLModuleRequest configures a saml module.
type SAMLModuleRequest struct {
	SessionFieldsRequest
	IdPMetadata       *string  `json:"idp_metadata,omitempty"`
	ForceAuthn        *bool    `json:"force_authn,omitempty"`
	AllowIdPInitiated *bool    `json:"allow_idp_initiated,omitempty"`
	AuthorizedGroups  []string `json:"authorized_groups"`
	NameIDFormat      *string  `json:"nameid_format,omitempty" enum:"saml_nameid_format"`
}
