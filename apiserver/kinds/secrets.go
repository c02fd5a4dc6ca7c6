package kinds

import "github.com/warrenhq/terraform-provider-warren/internal/api"

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
