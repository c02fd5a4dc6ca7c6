package edge

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// oidcLogin is the identity provider of an oidc module: the issuer's discovery document
// gives its endpoints and keys; the identity is the verified ID token's claims.
type oidcLogin struct {
	issuer, clientID, clientSecret string
	scopes                         []string // openid first
}

// defaultOIDCScopes are asked for when the module lists none.
var defaultOIDCScopes = []string{"openid", "email", "profile"}

// compileOIDC compiles an oidc module into a login step; nil when off.
func compileOIDC(routeID, match string, m *api.OIDCModule) *login {
	if m == nil || !m.Enabled {
		return nil
	}
	o := &oidcLogin{issuer: m.Issuer, clientID: m.ClientID, clientSecret: m.ClientSecret, scopes: defaultOIDCScopes}
	if len(m.Scopes) > 0 {
		o.scopes = unique(slices.Concat([]string{"openid"}, m.Scopes))
	}
	l := newLogin(routeID, match, m.SessionFields, o)
	l.allow = newAllowRules(m.EmailAddresses, m.EmailDomains, nil, nil)
	return l
}

func (o *oidcLogin) config(p *discovered, redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: o.clientID, ClientSecret: o.clientSecret, Endpoint: p.provider.Endpoint(), RedirectURL: redirect, Scopes: o.scopes}
}

func (o *oidcLogin) authURL(ctx context.Context, x *exchange, redirect string, st *loginState) (string, error) {
	p, err := x.e.discovery.get(ctx, x, o.issuer)
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(st.Nonce)}
	if p.pkce {
		opts = append(opts, oauth2.S256ChallengeOption(st.Verifier))
	}
	return o.config(p, redirect).AuthCodeURL(st.State, opts...), nil
}

func (o *oidcLogin) identify(ctx context.Context, x *exchange, redirect, code string, st *loginState) (signedIn, string, error) {
	p, err := x.e.discovery.get(ctx, x, o.issuer)
	if err != nil {
		return signedIn{}, "", err
	}
	tok, err := exchangeCode(ctx, x, o.config(p, redirect), code, st, p.pkce)
	if err != nil {
		return signedIn{}, "", err
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return signedIn{}, "", fmt.Errorf("%w: the token answer has no id_token", errLoginRefused)
	}
	idt, err := p.provider.Verifier(&oidc.Config{ClientID: o.clientID}).Verify(ctx, raw)
	if err != nil {
		return signedIn{}, "", fmt.Errorf("%w: %v", errLoginRefused, err)
	}
	if idt.Nonce != st.Nonce {
		return signedIn{}, "", fmt.Errorf("%w: the ID token's nonce is not the login's", errLoginRefused)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
		Name          string `json:"name"`
		Username      string `json:"preferred_username"`
	}
	if err := idt.Claims(&claims); err != nil {
		return signedIn{}, "", fmt.Errorf("%w: %v", errLoginRefused, err)
	}
	id := signedIn{Identity: session.Identity{Provider: "oidc", Subject: idt.Subject, Name: or(claims.Name, claims.Username)}}
	if verified(claims.EmailVerified, true) {
		id.Email = claims.Email
	}
	return id, "", nil
}

// recheck: an oidc module has no auth_check_interval; the session lives by its timeouts.
func (o *oidcLogin) recheck(context.Context, *exchange, string) (signedIn, error) {
	return signedIn{}, fmt.Errorf("oidc sessions are not checked again")
}

// discoveries caches the issuers' discovery documents for the edge's life (a day each):
// fetched on the first login that needs one, one fetch per issuer at a time, bounded by
// the identity providers' timeout. A failed fetch is not kept: the next login tries again.
type discoveries struct {
	mu     sync.Mutex
	byURL  map[string]*discovered
	flight singleflight.Group
}

type discovered struct {
	provider *oidc.Provider
	pkce     bool // the issuer takes S256
	at       time.Time
}

const discoveryTTL = 24 * time.Hour

func (d *discoveries) get(ctx context.Context, x *exchange, issuer string) (*discovered, error) {
	d.mu.Lock()
	p := d.byURL[issuer]
	d.mu.Unlock()
	if p != nil && time.Since(p.at) < discoveryTTL {
		return p, nil
	}
	ch := d.flight.DoChan(issuer, func() (any, error) {
		// Not the visitor's context: a fetch others wait for outlives the one who began it.
		pctx := oidc.ClientContext(context.Background(), x.e.authClient)
		op, err := oidc.NewProvider(pctx, issuer)
		if err != nil {
			return nil, providerError{fmt.Errorf("OIDC discovery of %s: %w", issuer, err)}
		}
		var meta struct {
			Methods []string `json:"code_challenge_methods_supported"`
		}
		_ = op.Claims(&meta)
		p := &discovered{provider: op, pkce: slices.Contains(meta.Methods, "S256"), at: time.Now()}
		d.mu.Lock()
		if d.byURL == nil {
			d.byURL = map[string]*discovered{}
		}
		d.byURL[issuer] = p
		d.mu.Unlock()
		return p, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*discovered), nil
	case <-ctx.Done():
		return nil, providerError{fmt.Errorf("OIDC discovery of %s: %w", issuer, ctx.Err())}
	}
}
