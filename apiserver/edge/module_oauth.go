package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/endpoints"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// OAuthProvider is the operator's configuration of one OAuth provider (Options.OAuth): ""
// keeps the provider's public endpoint. ClientID and ClientSecret are the service-managed
// app, which oauth modules without their own client_id sign in with.
type OAuthProvider struct {
	AuthURL, TokenURL, APIURL string
	ClientID, ClientSecret    string
}

// oauthSpec is what the edge knows of one OAuth provider: its public endpoints, the scopes
// its identity needs, and how its user API tells who signed in.
type oauthSpec struct {
	endpoint oauth2.Endpoint
	api      string   // the user API's base URL
	scopes   []string // always asked for
	pkce     bool     // the provider takes PKCE (S256)
	// identify reads the signed-in user with the API client; orgs: also the GitHub teams
	// and organizations.
	identify func(ctx context.Context, c *apiClient, orgs bool) (signedIn, error)
}

// oauthSpecs are the eight providers of api.OAuthProvider.
var oauthSpecs = map[string]oauthSpec{
	"github": {
		endpoint: endpoints.GitHub, api: "https://api.github.com", pkce: true,
		scopes: []string{"read:user", "user:email"}, identify: githubIdentity,
	},
	"facebook": {
		endpoint: endpoints.Facebook, api: "https://graph.facebook.com/v22.0",
		scopes: []string{"public_profile", "email"}, identify: facebookIdentity,
	},
	"microsoft": {
		endpoint: endpoints.AzureAD("common"), api: "https://graph.microsoft.com/v1.0", pkce: true,
		scopes: []string{"openid", "email", "profile", "User.Read"}, identify: microsoftIdentity,
	},
	"google": {
		endpoint: endpoints.Google, api: "https://openidconnect.googleapis.com/v1", pkce: true,
		scopes: []string{"openid", "email", "profile"}, identify: userinfoIdentity,
	},
	"linkedin": {
		endpoint: endpoints.LinkedIn, api: "https://api.linkedin.com/v2",
		scopes: []string{"openid", "email", "profile"}, identify: userinfoIdentity,
	},
	"gitlab": {
		endpoint: endpoints.GitLab, api: "https://gitlab.com/api/v4", pkce: true,
		scopes: []string{"read_user"}, identify: gitlabIdentity,
	},
	"twitch": {
		endpoint: oauth2.Endpoint{AuthURL: endpoints.Twitch.AuthURL, TokenURL: endpoints.Twitch.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		api:      "https://api.twitch.tv/helix",
		scopes:   []string{"user:read:email"}, identify: twitchIdentity,
	},
	"amazon": {
		endpoint: endpoints.Amazon, api: "https://api.amazon.com",
		scopes: []string{"profile"}, identify: amazonIdentity,
	},
}

// oauthLogin is the identity provider of an oauth module.
type oauthLogin struct {
	provider string
	spec     oauthSpec
	app      *api.OAuthApp // its own app when ClientID is set, else the managed app
	scopes   []string      // the module's, beside the spec's
	orgs     bool          // GitHub teams or organizations are in the rules
}

// compileOAuth compiles an oauth module into a login step; nil when off.
func compileOAuth(routeID, match string, m *api.OAuthModule) *login {
	if m == nil || !m.Enabled {
		return nil
	}
	p := &m.Provider
	var (
		name        string
		app         *api.OAuthApp
		teams, orgs []string
	)
	for n, a := range map[string]*api.OAuthApp{"facebook": p.Facebook, "microsoft": p.Microsoft, "google": p.Google, "linkedin": p.LinkedIn, "gitlab": p.GitLab, "twitch": p.Twitch, "amazon": p.Amazon} {
		if a != nil {
			name, app = n, a
		}
	}
	if p.GitHub != nil {
		name, app, teams, orgs = "github", &p.GitHub.OAuthApp, p.GitHub.Teams, p.GitHub.Organizations
	}
	if app == nil {
		return nil // the write rules require one provider
	}
	o := &oauthLogin{provider: name, spec: oauthSpecs[name], app: app, scopes: app.Scopes, orgs: len(teams)+len(orgs) > 0}
	if o.orgs {
		o.scopes = slices.Concat([]string{"read:org"}, o.scopes)
	}
	l := newLogin(routeID, match, m.SessionFields, o)
	l.checkEvery = seconds(m.AuthCheckInterval)
	l.allow = newAllowRules(app.EmailAddresses, app.EmailDomains, teams, orgs)
	return l
}

// config is the oauth2 configuration for this module on this server: the operator's
// endpoint overrides, the module's app or the managed one.
func (o *oauthLogin) config(x *exchange, redirect string) (*oauth2.Config, string, error) {
	op := x.e.opts.OAuth[o.provider]
	ep, apiURL := o.spec.endpoint, o.spec.api
	ep.AuthURL, ep.TokenURL, apiURL = or(op.AuthURL, ep.AuthURL), or(op.TokenURL, ep.TokenURL), or(op.APIURL, apiURL)
	cfg := &oauth2.Config{Endpoint: ep, RedirectURL: redirect, Scopes: unique(slices.Concat(o.spec.scopes, o.scopes))}
	switch {
	case o.app.ClientID != nil && *o.app.ClientID != "":
		cfg.ClientID = *o.app.ClientID
		if o.app.ClientSecret != nil {
			cfg.ClientSecret = *o.app.ClientSecret
		}
	case op.ClientID != "" && op.ClientSecret != "":
		cfg.ClientID, cfg.ClientSecret = op.ClientID, op.ClientSecret
	default:
		return nil, "", noManagedApp{o.provider}
	}
	return cfg, strings.TrimSuffix(apiURL, "/"), nil
}

func (o *oauthLogin) authURL(_ context.Context, x *exchange, redirect string, st *loginState) (string, error) {
	cfg, _, err := o.config(x, redirect)
	if err != nil {
		return "", err
	}
	var opts []oauth2.AuthCodeOption
	if o.spec.pkce {
		opts = append(opts, oauth2.S256ChallengeOption(st.Verifier))
	}
	return cfg.AuthCodeURL(st.State, opts...), nil
}

func (o *oauthLogin) identify(ctx context.Context, x *exchange, redirect, code string, st *loginState) (signedIn, string, error) {
	cfg, apiURL, err := o.config(x, redirect)
	if err != nil {
		return signedIn{}, "", err
	}
	tok, err := exchangeCode(ctx, x, cfg, code, st, o.spec.pkce)
	if err != nil {
		return signedIn{}, "", err
	}
	id, err := o.read(ctx, x, cfg, apiURL, tok.AccessToken)
	return id, tok.AccessToken, err
}

func (o *oauthLogin) recheck(ctx context.Context, x *exchange, token string) (signedIn, error) {
	cfg, apiURL, err := o.config(x, "")
	if err != nil {
		return signedIn{}, err
	}
	return o.read(ctx, x, cfg, apiURL, token)
}

func (o *oauthLogin) read(ctx context.Context, x *exchange, cfg *oauth2.Config, apiURL, token string) (signedIn, error) {
	c := &apiClient{http: x.e.authClient, base: apiURL, token: token, clientID: cfg.ClientID}
	id, err := o.spec.identify(ctx, c, o.orgs)
	id.Provider = o.provider
	return id, err
}

// apiClient calls a provider's user API with the user's access token.
type apiClient struct {
	http        *http.Client
	base, token string
	clientID    string // Twitch wants it beside the token
}

// get decodes the JSON answer of GET base+path into v.
func (c *apiClient) get(ctx context.Context, path string, v any, header ...string) error {
	url := c.base + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return providerError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(url, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return providerError{fmt.Errorf("GET %s: %w", url, err)}
	}
	return nil
}

// githubAPI are the headers GitHub's REST API asks for.
var githubAPI = []string{"Accept", "application/vnd.github+json", "X-GitHub-Api-Version", "2022-11-28"}

// githubIdentity: GET /user (id, login, name), /user/emails (the primary verified address),
// and with orgs /user/teams and /user/orgs (the first 100 of each).
func githubIdentity(ctx context.Context, c *apiClient, orgs bool) (signedIn, error) {
	var user struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
		Name  string `json:"name"`
	}
	if err := c.get(ctx, "/user", &user, githubAPI...); err != nil {
		return signedIn{}, err
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := c.get(ctx, "/user/emails?per_page=100", &emails, githubAPI...); err != nil {
		return signedIn{}, err
	}
	id := signedIn{Identity: session.Identity{Subject: strconv.FormatInt(user.ID, 10), Name: or(user.Name, user.Login)}}
	for _, e := range emails {
		if e.Primary && e.Verified {
			id.Email = e.Email
		}
	}
	if !orgs {
		return id, nil
	}
	var teams []struct {
		ID           int64  `json:"id"`
		Slug         string `json:"slug"`
		Organization struct {
			Login string `json:"login"`
		} `json:"organization"`
	}
	if err := c.get(ctx, "/user/teams?per_page=100", &teams, githubAPI...); err != nil {
		return signedIn{}, err
	}
	for _, t := range teams {
		id.teams = append(id.teams, strconv.FormatInt(t.ID, 10), strings.ToLower(t.Organization.Login+"/"+t.Slug))
	}
	var memberOf []struct {
		Login string `json:"login"`
	}
	if err := c.get(ctx, "/user/orgs?per_page=100", &memberOf, githubAPI...); err != nil {
		return signedIn{}, err
	}
	for _, o := range memberOf {
		id.orgs = append(id.orgs, strings.ToLower(o.Login))
	}
	return id, nil
}

// facebookIdentity: GET /me?fields=id,name,email (Facebook returns only a confirmed address).
func facebookIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var me struct{ ID, Name, Email string }
	err := c.get(ctx, "/me?fields=id,name,email", &me)
	return signedIn{Identity: session.Identity{Subject: me.ID, Name: me.Name, Email: me.Email}}, err
}

// microsoftIdentity: Microsoft Graph GET /me (id, displayName, mail).
func microsoftIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var me struct {
		ID          string `json:"id"`
		DisplayName string `json:"displayName"`
		Mail        string `json:"mail"`
	}
	err := c.get(ctx, "/me", &me)
	return signedIn{Identity: session.Identity{Subject: me.ID, Name: me.DisplayName, Email: me.Mail}}, err
}

// userinfoIdentity: the OpenID Connect GET /userinfo of Google and LinkedIn (sub, name,
// email when email_verified).
func userinfoIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var info struct {
		Sub           string `json:"sub"`
		Name          string `json:"name"`
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	err := c.get(ctx, "/userinfo", &info)
	id := signedIn{Identity: session.Identity{Subject: info.Sub, Name: info.Name}}
	if verified(info.EmailVerified, false) {
		id.Email = info.Email
	}
	return id, err
}

// gitlabIdentity: GET /user (id, username, name, email once confirmed_at is set).
func gitlabIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var user struct {
		ID          int64   `json:"id"`
		Username    string  `json:"username"`
		Name        string  `json:"name"`
		Email       string  `json:"email"`
		ConfirmedAt *string `json:"confirmed_at"`
	}
	err := c.get(ctx, "/user", &user)
	id := signedIn{Identity: session.Identity{Subject: strconv.FormatInt(user.ID, 10), Name: or(user.Name, user.Username)}}
	if user.ConfirmedAt != nil && *user.ConfirmedAt != "" {
		id.Email = user.Email
	}
	return id, err
}

// twitchIdentity: Helix GET /users with the Client-Id header (id, login, display_name, and
// the verified email).
func twitchIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var users struct {
		Data []struct {
			ID          string `json:"id"`
			Login       string `json:"login"`
			DisplayName string `json:"display_name"`
			Email       string `json:"email"`
		} `json:"data"`
	}
	if err := c.get(ctx, "/users", &users, "Client-Id", c.clientID); err != nil {
		return signedIn{}, err
	}
	if len(users.Data) == 0 {
		return signedIn{}, fmt.Errorf("%w: Twitch returned no user", errLoginRefused)
	}
	u := users.Data[0]
	return signedIn{Identity: session.Identity{Subject: u.ID, Name: or(u.DisplayName, u.Login), Email: u.Email}}, nil
}

// amazonIdentity: Login with Amazon's GET /user/profile (user_id, name, email).
func amazonIdentity(ctx context.Context, c *apiClient, _ bool) (signedIn, error) {
	var p struct {
		UserID string `json:"user_id"`
		Name   string `json:"name"`
		Email  string `json:"email"`
	}
	err := c.get(ctx, "/user/profile", &p)
	return signedIn{Identity: session.Identity{Subject: p.UserID, Name: p.Name, Email: p.Email}}, err
}

// verified reads an email_verified claim, a boolean or (some providers) a string; absent is
// ifAbsent.
func verified(v any, ifAbsent bool) bool {
	switch b := v.(type) {
	case nil:
		return ifAbsent
	case bool:
		return b
	case string:
		return strings.EqualFold(b, "true")
	}
	return false
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func unique(l []string) []string {
	var out []string
	for _, v := range l {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
