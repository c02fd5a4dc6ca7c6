package kinds

import (
	"encoding/json"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// The shapes of the secret columns (store.Object.Secret): server-only data, never rendered.

// TokenSecret is what an API key or a credential keeps of its token.
type TokenSecret struct {
	TokenHash string `json:"token_hash"`
}

// SSHCASecret is the stored private half of an SSH CA.
type SSHCASecret struct {
	PrivateKeyPEM string `json:"private_key_pem"`
}

// TLSCertificateSecret is the stored private key of a TLS certificate, as uploaded.
type TLSCertificateSecret struct {
	PrivateKeyPEM string `json:"private_key_pem"`
}

// OperatorCASecret is the private key of an account's operator CA.
type OperatorCASecret struct {
	KeyPEM string `json:"key_pem"`
}

// RouteSecret is what a route keeps in the store's secret column: the SAML signing key, and
// the module secrets the API returns (details.md §8.6, §8.8), which its document holds as "".
type RouteSecret struct {
	SAMLKeyPEM         string `json:"saml_key_pem,omitempty"`
	SAMLCertificatePEM string `json:"saml_certificate_pem,omitempty"`
	OAuthClientSecret  string `json:"oauth_client_secret,omitempty"`
	OIDCClientSecret   string `json:"oidc_client_secret,omitempty"`
	WebhookSecret      string `json:"webhook_secret,omitempty"`
}

// IdempotencySecret holds the answer's body of an Idempotency-Key record: a create that
// mints a token answers with it, and a secret never sits in a document.
type IdempotencySecret struct {
	Body []byte `json:"body"`
}

// SessionSecret is what the store keeps of an agent session beside its document: the
// replica that holds its socket.
type SessionSecret struct {
	Replica string `json:"replica"`
}

// DestinationSecret is what an event destination keeps in the store's secret column: the
// target's secrets, which every response redacts to "" (details.md §9.3).
type DestinationSecret struct {
	SecretAccessKey string `json:"secret_access_key,omitempty"`
	APIKey          string `json:"api_key,omitempty"`
	ClientSecret    string `json:"client_secret,omitempty"`
}

// SecretField pairs a secret as stored with the member of the wire object that carries it.
type SecretField struct{ Stored, Wire *string }

// Fields points at the secret members of t (none for the kinds t does not have).
func (s *DestinationSecret) Fields(t *api.EventTarget) []SecretField {
	var out []SecretField
	if auth := awsAuth(t); auth != nil && auth.Creds != nil {
		out = append(out, SecretField{&s.SecretAccessKey, &auth.Creds.SecretAccessKey})
	}
	if t.Observability != nil {
		out = append(out, SecretField{&s.APIKey, &t.Observability.APIKey})
	}
	if t.CloudLogsIngestion != nil {
		out = append(out, SecretField{&s.ClientSecret, &t.CloudLogsIngestion.ClientSecret})
	}
	return out
}

// awsAuth is the auth of an AWS target, nil for the other kinds.
func awsAuth(t *api.EventTarget) *api.AWSAuth {
	switch {
	case t.DeliveryStream != nil:
		return t.DeliveryStream.Auth
	case t.DataStream != nil:
		return t.DataStream.Auth
	case t.LogGroup != nil:
		return t.LogGroup.Auth
	}
	return nil
}

// RouteModuleSecrets points at the module secrets of r: the OAuth app's client secret (nil
// without an app), the OIDC client secret and the webhook verification secret (nil without
// the module).
func RouteModuleSecrets(r *api.HTTPSEdgeRoute) (oauth **string, oidc, webhook *string) {
	if r.OAuth != nil {
		p := &r.OAuth.Provider
		for _, app := range []*api.OAuthApp{p.Facebook, p.Microsoft, p.Google, p.LinkedIn, p.GitLab, p.Twitch, p.Amazon} {
			if app != nil {
				oauth = &app.ClientSecret
			}
		}
		if p.GitHub != nil {
			oauth = &p.GitHub.ClientSecret
		}
	}
	if r.OIDC != nil {
		oidc = &r.OIDC.ClientSecret
	}
	if r.WebhookVerification != nil {
		webhook = &r.WebhookVerification.Secret
	}
	return oauth, oidc, webhook
}

// RevealRouteSecrets puts the module secrets of a route's secret column (RouteSecret) into
// its decoded document, where they are stored as "" (the API's answers, the edge's
// modules). A document from before they moved still holds them.
func RevealRouteSecrets(r *api.HTTPSEdgeRoute, secret []byte) error {
	if len(secret) == 0 {
		return nil
	}
	var sec RouteSecret
	if err := json.Unmarshal(secret, &sec); err != nil {
		return err
	}
	oauth, oidc, webhook := RouteModuleSecrets(r)
	if oauth != nil && sec.OAuthClientSecret != "" {
		*oauth = &sec.OAuthClientSecret
	}
	if oidc != nil && sec.OIDCClientSecret != "" {
		*oidc = sec.OIDCClientSecret
	}
	if webhook != nil && sec.WebhookSecret != "" {
		*webhook = sec.WebhookSecret
	}
	return nil
}
