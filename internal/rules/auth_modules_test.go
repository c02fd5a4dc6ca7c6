package rules

import (
	"os"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestOAuthBasics(t *testing.T) {
	got, err := OAuth(&api.OAuthModuleRequest{Provider: &api.OAuthProviderRequest{Google: &api.OAuthAppRequest{EmailDomains: []string{"example.com"}}}})
	want(t, "managed google", got, err, "", "", &api.OAuthModule{
		SessionFields: api.SessionFields{Enabled: true, CookiePrefix: DefaultOAuthCookiePrefix},
		Provider:      api.OAuthProvider{Google: &api.OAuthApp{Scopes: []string{}, EmailAddresses: []string{}, EmailDomains: []string{"example.com"}}},
	})
	_, err = OAuth(&api.OAuthModuleRequest{})
	want(t, "no provider", (*api.OAuthModule)(nil), err, "ERR_7037", "provider", nil)
}

func TestOIDCBasics(t *testing.T) {
	got, err := OIDC(&api.OIDCModuleRequest{Issuer: ptr("https://accounts.example.com"), ClientID: ptr("id"), ClientSecret: ptr("secret")})
	want(t, "oidc", got, err, "", "", &api.OIDCModule{SessionFields: api.SessionFields{Enabled: true}, Issuer: "https://accounts.example.com", ClientID: "id", ClientSecret: "secret", Scopes: []string{}})
	_, err = OIDC(&api.OIDCModuleRequest{ClientID: ptr("id"), ClientSecret: ptr("secret")})
	want(t, "no issuer", (*api.OIDCModule)(nil), err, "ERR_7088", "issuer", nil)
}

func idpMetadata(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/idp_metadata.xml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSAMLBasics(t *testing.T) {
	md := idpMetadata(t)
	got, err := SAML(&api.SAMLModuleRequest{IdPMetadata: &md})
	want(t, "saml defaults", got, err, "", "", &api.SAMLModule{
		SessionFields: api.SessionFields{Enabled: true}, IdPMetadata: md, AllowIdPInitiated: true,
		AuthorizedGroups: []string{}, NameIDFormat: DefaultSAMLNameIDFormat,
	})
	bad := strings.Replace(md, "IDPSSODescriptor", "SPSSODescriptor", 2)
	_, err = SAML(&api.SAMLModuleRequest{IdPMetadata: &bad})
	want(t, "no IDPSSODescriptor", (*api.SAMLModule)(nil), err, "ERR_7083", "idp_metadata", nil)
}
