package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/browsertest"
)

// browser is a test server with its console, and a headless Chromium on it.
type browser struct {
	t   *testing.T
	srv *apiservertest.Server
	ctx context.Context
}

func startBrowser(t *testing.T, configure ...func(*apiserver.Options)) *browser {
	t.Helper()
	opts := append([]func(*apiserver.Options){apiservertest.NoRateLimit, func(o *apiserver.Options) { o.Console = true }}, configure...)
	return &browser{t: t, srv: apiservertest.Start(t, opts...), ctx: browsertest.New(t)}
}

// api calls the server's API as the bootstrap admin.
func (b *browser) api(method, path string, body any) map[string]any {
	b.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, b.srv.URL+path, bytes.NewReader(raw))
	if body == nil {
		req, _ = http.NewRequest(method, b.srv.URL+path, nil)
	}
	req.Header.Set("Authorization", "Bearer "+b.srv.APIKey)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out
}

func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.screenshot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// signIn opens the console and signs in with the keyboard: the API key, with the admin
// token when admin, then Enter.
func (b *browser) signIn(admin bool) {
	b.t.Helper()
	b.do("open the console", chromedp.Navigate(b.srv.URL+"/console/"), chromedp.WaitVisible("#api-key"),
		chromedp.SendKeys("#api-key", b.srv.APIKey))
	if admin {
		b.do("type the admin token", chromedp.SendKeys("#admin-token", b.srv.AdminToken))
	}
	b.do("sign in", chromedp.SendKeys("#api-key", "\r"), chromedp.WaitVisible("ul.families"))
	// The key is in the tab's session storage only: no cookie, not in the URL.
	stored, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`sessionStorage.getItem("warren.apiKey") + "|" + document.cookie + "|" + location.href`))
	if err != nil {
		b.t.Fatal(err)
	}
	key, rest, _ := strings.Cut(stored, "|")
	if key != b.srv.APIKey || strings.Contains(rest, b.srv.APIKey) || !strings.HasPrefix(rest, "|") {
		b.t.Fatalf("after sign-in: session storage, cookies and URL are %q", stored)
	}
}

// waitText waits until the element sel shows want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	b.waitShown(sel, want, true)
}

// waitShown waits until the element sel shows want (or, unless shows, exists without it).
func (b *browser) waitShown(sel, want string, shows bool) {
	b.t.Helper()
	js := `(() => { const e = document.querySelector(` + quote(sel) + `); return !!e && e.innerText.includes(` + quote(want) + `) === ` + strconv.FormatBool(shows) + `; })()`
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		b.screenshot("failed")
		body, _ := chromedp.Run(b.ctx, chromedp.Text("body"))
		b.t.Fatalf("%s never showed %q (%v): %v; the page: %s", sel, want, shows, err, body)
	}
}

// screenshot keeps what the browser shows as the test's output (go test -artifacts keeps
// the directory).
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot: %v", err)
		return
	}
	path := filepath.Join(b.t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

func quote(s string) string { q, _ := json.Marshal(s); return string(q) }

// A user signs in, opens a family's list, pages through it, and finds one object with a CEL
// filter typed and submitted from the keyboard.
func TestConsoleFindsAnObjectWithAFilter(t *testing.T) {
	b := startBrowser(t)
	web := b.api("POST", "/credentials", map[string]any{"description": "web servers"})["id"].(string)
	db := b.api("POST", "/credentials", map[string]any{"description": "database"})["id"].(string)
	var newest string
	for range 20 { // a page is 20: web and db, the oldest, are on the second
		newest = b.api("POST", "/credentials", map[string]any{"description": "filler"})["id"].(string)
	}
	b.signIn(false)
	b.do("open the credentials", chromedp.Click(`a[href="#/list?path=%2Fcredentials"]`), chromedp.WaitVisible("#filter"))
	b.waitText("#results", newest)
	b.waitShown("#results", db, false)
	b.do("next page", chromedp.Click("#next-page"))
	b.waitText("#results", db)
	b.waitShown("#results", newest, false)
	b.do("filter", chromedp.SendKeys("#filter", `obj.description.contains("web")`+"\r"))
	b.waitShown("#results", db, false) // the filtered page replaced the whole list
	b.waitText("#results", web)
	if got, _ := chromedp.Run(b.ctx, chromedp.Value("#filter")); got != `obj.description.contains("web")` {
		t.Fatalf("the filter box holds %q after the search", got)
	}
	b.screenshot("filter")
}

// An HTTPS edge's shape shows its hostport, routes, modules, backend and the tunnel online
// behind it, and its traffic charts.
func TestConsoleShowsAnEdgesShape(t *testing.T) {
	b := startBrowser(t)
	token := b.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	b.srv.StartAgent(t, agentclient.Config{Authtoken: token, Tunnels: []agentclient.TunnelConfig{
		{Proto: "http", Labels: map[string]string{"app": "shop"}, ForwardsTo: "http://127.0.0.1:3000"}}})
	group := b.api("POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "shop"}})["id"].(string)
	b.api("POST", "/reserved_domains", map[string]any{"domain": "shop.example.com"})
	edge := b.api("POST", "/edges/https", map[string]any{"hostports": []string{"shop.example.com:443"}})["id"].(string)
	route := b.api("POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/api",
		"backend": map[string]any{"backend_id": group}, "compression": map[string]any{"enabled": true}})["id"].(string)
	tunnels := b.api("GET", "/backends/tunnel_group/"+group, nil)["tunnels"].([]any)
	if len(tunnels) != 1 {
		t.Fatalf("the group has %d tunnels online, want 1", len(tunnels))
	}
	tunnel := tunnels[0].(map[string]any)["id"].(string)
	// Traffic the edge counted (as the edge's Traffic recorder would), written to the store.
	b.srv.TrafficRecorder().Request(b.srv.AccountID, edge, route, 200, 3*time.Millisecond, 100, 900)
	b.srv.TrafficRecorder().Request(b.srv.AccountID, edge, route, 502, 40*time.Millisecond, 100, 50)
	b.srv.FlushTraffic(t)

	b.signIn(false)
	b.do("open the HTTPS edges", chromedp.Click(`a[href="#/list?path=%2Fedges%2Fhttps"]`))
	b.waitText("#results", edge)
	b.do("open the edge", chromedp.Click(`#results a`), chromedp.WaitVisible("#shape"))
	b.waitText("#routes", "path_prefix /api")
	b.waitText("#routes", tunnel+" (online)")
	shape, err := chromedp.Run(b.ctx, chromedp.TextContent("#shape")) // SVG has no innerText
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shop.example.com:443", "path_prefix /api", "compression", "tunnel_group", "online"} {
		if !strings.Contains(shape, want) {
			t.Fatalf("the edge's shape lacks %q: %s", want, shape)
		}
	}
	b.waitText("#charts", "2 requests")
	b.screenshot("edge")
}

// A user sees the agents online with their tunnels and stops a session after confirming.
func TestConsoleStopsAnAgentSession(t *testing.T) {
	b := startBrowser(t)
	token := b.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	agent := b.srv.StartAgent(t, agentclient.Config{Authtoken: token, OS: "linux", Tunnels: []agentclient.TunnelConfig{
		{Proto: "http", Labels: map[string]string{"app": "shop"}, ForwardsTo: "http://127.0.0.1:3000"}}})
	session := agent.WaitFor(t, "a session", func(s agentclient.State) bool { return s.SessionID != "" }).SessionID

	b.signIn(false)
	b.do("open the agents", chromedp.Click(`a[href="#/agents"]`))
	b.waitText("#session-"+session, "app=shop")
	b.do("stop", chromedp.Click("#stop-"+session), chromedp.WaitVisible("#confirm"))
	b.waitText("#confirm-text", session)
	b.screenshot("confirm")
	b.do("confirm", chromedp.Click("#confirm-ok"))
	b.waitText("main", "No agent is online.")
	if got := b.api("GET", "/tunnel_sessions", nil)["tunnel_sessions"].([]any); len(got) != 0 {
		t.Fatalf("%d sessions after the stop", len(got))
	}
	b.screenshot("stopped")
}

// An operator signed in with the admin token sees the events and a delivery's state.
func TestConsoleShowsADeliverysState(t *testing.T) {
	b := startBrowser(t, func(o *apiserver.Options) { o.Events.Workers = -1 }) // no sender: the delivery stays pending
	dest := b.api("POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{
		"auth":       map[string]any{"creds": map[string]any{"access_key_id": "AKIAEXAMPLE", "secret_access_key": "not-used"}},
		"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}})["id"].(string)
	b.api("POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{dest}})
	b.api("POST", "/ip_policies", map[string]any{})

	b.signIn(true)
	b.do("open the events", chromedp.Click(`a[href="#/events"]`))
	b.waitText("#events", "ip_policy_created.v0")
	b.do("open the deliveries", chromedp.Click(`a[href="#/deliveries"]`))
	b.waitText("#deliveries", dest)
	b.waitText("#deliveries .state-pending", "pending")
	b.screenshot("deliveries")
}
