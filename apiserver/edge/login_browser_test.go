package edge_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/internal/browsertest"
)

// browserSignIn drives a real Chromium: it opens pageURL, expects the provider's sign-in
// page (marker), types email, submits, and returns the text the browser ends on (the app's
// #who, or the body of an error page).
func browserSignIn(t *testing.T, ctx context.Context, pageURL, marker, email string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitVisible("#email")); err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
	}
	if page, err := chromedp.Run(ctx, chromedp.Text("body")); err != nil || !strings.Contains(page, marker) {
		t.Fatalf("not at the provider's sign-in page: %q %v", page, err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys("#email", email), chromedp.Click("#submit"), chromedp.WaitNotPresent("#email")); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("body"))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// browserExpire rewrites the browser's session cookie for pageURL as one idle for an hour.
func (e *env) browserExpire(ctx context.Context, pageURL, host, cookie, routeID string) {
	e.t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{pageURL}})
	if err != nil {
		e.t.Fatal(err)
	}
	codec, err := session.CodecFor(e.srv.Store)
	if err != nil {
		e.t.Fatal(err)
	}
	purpose := "route session " + routeID // signin.go's sessionPurpose
	for _, c := range res.Cookies {
		if c.Name != cookie {
			continue
		}
		var s session.Session
		if err := codec.Open(purpose, c.Value, &s); err != nil {
			e.t.Fatal(err)
		}
		s.Seen = time.Now().Add(-time.Hour)
		v, err := codec.Seal(purpose, &s)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: cookie, Value: v, URL: pageURL, Path: "/", Secure: new(true), HTTPOnly: new(true)}); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	e.t.Fatalf("the browser has no cookie %s for %s (%d cookies)", cookie, host, len(res.Cookies))
}

// TestOAuthLoginInBrowser: a real browser goes from the app to the GitHub-shaped
// provider's sign-in page and back with the session cookie, and the app answers with the
// identity; an e-mail address the module does not allow is refused; an idle session goes
// back to the provider's page.
func TestOAuthLoginInBrowser(t *testing.T) {
	o := newOAuthEnv(t, []string{"github"})
	f := o.idps["github"]
	host := "gh.example.test"
	id := o.route(host, map[string]any{"inactivity_timeout": 600, "provider": map[string]any{"github": f.app(map[string]any{"email_addresses": []string{"alice@example.com"}})}})
	_, port, _ := net.SplitHostPort(o.https.Addr().String())
	page := "https://" + host + ":" + port + "/hello"

	ctx := browsertest.New(t)
	who := browserSignIn(t, ctx, page, "Sign in to github", "alice@example.com")
	if !strings.Contains(who, "GET /hello provider=github email=alice@example.com id=1001 name=alice forged= cookie=") {
		t.Fatalf("the app answered %q", who)
	}
	o.browserExpire(ctx, page, host, session.CookieName("warren."), id)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible("#email")); err != nil {
		t.Fatalf("an idle session did not go back to the provider: %v", err)
	}

	// Another visitor in the same browser: its cookies cleared.
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if got := browserSignIn(t, ctx, page, "Sign in to github", "mallory@evil.example"); !strings.Contains(got, "403 Forbidden") || !strings.Contains(got, "ERR_8040") {
		t.Fatalf("mallory's browser got %q", got)
	}
}

// TestOIDCLoginInBrowser: a real browser signs in at a real OIDC provider's page and comes
// back to the app with its identity; an idle session goes back to the provider.
func TestOIDCLoginInBrowser(t *testing.T) {
	p := newOIDCProvider(t)
	e := newEnv(t)
	e.labelled("http", map[string]string{"app": "who"}, "http://"+identityApp(t))
	backend := e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "who"}})
	host := "sso.example.test"
	_, id := e.httpsEdge(host, backend, map[string]any{"oidc": p.module(map[string]any{"inactivity_timeout": 600})})
	_, port, _ := net.SplitHostPort(e.https.Addr().String())
	page := "https://" + host + ":" + port + "/"

	ctx := browsertest.New(t)
	who := browserSignIn(t, ctx, page, oidcMarker, "alice@example.com")
	if !strings.Contains(who, "GET / provider=oidc email=alice@example.com id=sub-alice name=alice") {
		t.Fatalf("the app answered %q", who)
	}
	e.browserExpire(ctx, page, host, session.CookieName(""), id)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible("#email")); err != nil {
		t.Fatalf("an idle session did not go back to the provider: %v", err)
	}
}
