package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/browsertest"
	"github.com/warrenhq/terraform-provider-warren/internal/inspect"
)

// TestInspectorInBrowser: a request through a real edge and agent appears in the agent's
// inspector page with its credentials masked, and a replay from the page, driven with the
// keyboard, reaches the app with the original credentials.
func TestInspectorInBrowser(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	edge := srv.StartEdge(t)
	got := make(chan string, 16) // what the app received: method path authorization
	app := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "app-s3cret"})
		io.WriteString(w, "app answered "+r.URL.Path)
	})}
	appLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Serve(appLn)
	t.Cleanup(func() { app.Close() })

	certPEM, keyPEM, roots := selfSigned(t, "insp.example.test")
	token := apiCall(t, srv, "POST", "/credentials", map[string]any{"acl": []string{"bind:app=insp"}})["token"].(string)
	cert := apiCall(t, srv, "POST", "/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM})["id"].(string)
	apiCall(t, srv, "POST", "/reserved_domains", map[string]any{"domain": "insp.example.test", "certificate_id": cert})
	group := apiCall(t, srv, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "insp"}})["id"].(string)
	edgeID := apiCall(t, srv, "POST", "/edges/https", map[string]any{"hostports": []string{"insp.example.test:443"}})["id"].(string)
	apiCall(t, srv, "POST", "/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": group}})

	ctx, cancel := context.WithCancel(context.Background())
	agentLog := &apiservertest.LockedBuffer{}
	agentDone := make(chan int)
	env := map[string]string{"WARREN_AGENT_AUTHTOKEN": token, "WARREN_AGENT_SERVER": srv.URL, "WARREN_AGENT_FORWARDS_TO": "http://" + appLn.Addr().String()}
	go func() {
		agentDone <- run(ctx, []string{"--label", "app=insp", "--inspect", "127.0.0.1:0"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard, agentLog)
	}()
	t.Cleanup(func() { cancel(); <-agentDone })

	visitor := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, edge.HTTPS)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "https://insp.example.test/hello", nil)
		req.Header.Set("Authorization", "Bearer visitor-s3cret")
		req.Header.Set("Cookie", "session=visitor-s3cret")
		resp, err := visitor.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && string(body) == "app answered /hello" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never served: %v; its log: %s", err, agentLog.String())
		}
	}
	if g := <-got; g != "GET /hello Bearer visitor-s3cret" {
		t.Fatalf("the app got %q", g)
	}
	page := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(agentLog.String())
	if page == "" {
		t.Fatalf("the agent logged no inspector address: %s", agentLog.String())
	}

	b := browsertest.New(t)
	shot := func(name string) {
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		if err != nil {
			t.Logf("screenshot: %v", err)
			return
		}
		path := filepath.Join(t.ArtifactDir(), name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	waitText := func(sel, want string) {
		t.Helper()
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		js := `(() => { const e = document.querySelector(` + q(sel) + `); return !!e && e.innerText.includes(` + q(want) + `); })()`
		if _, err := chromedp.Run(b, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			shot("failed")
			body, _ := chromedp.Run(b, chromedp.Text("body"))
			t.Fatalf("%s never showed %q: %v; the page: %s", sel, want, err, body)
		}
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, actions...); err != nil {
			shot("failed")
			t.Fatalf("%s: %v", what, err)
		}
	}

	do("open the inspector", chromedp.Navigate(page))
	waitText("#list tbody", "/hello")
	waitText("#list tbody", "200")
	// Keyboard: focus the newest row and open it with Enter.
	do("open the request", chromedp.Focus("#list tbody tr"), chromedp.SendKeys("#list tbody tr", "\r"), chromedp.WaitVisible("#detail"))
	waitText("#req-headers", "Authorization")
	waitText("#req-headers", inspect.Masked)
	waitText("#resp-headers", "Set-Cookie")
	waitText("#resp-body", "app answered /hello")
	text, err := chromedp.Run(b, chromedp.Text("body"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "s3cret") {
		t.Fatalf("the page shows a credential: %s", text)
	}
	shot("request")

	do("replay it", chromedp.Focus("#replay"), chromedp.SendKeys("#replay", "\r"))
	waitText("#replay-result", "Replayed GET /hello: 200")
	if g := <-got; g != "GET /hello Bearer visitor-s3cret" {
		t.Fatalf("the replay reached the app as %q", g)
	}
	waitText("#list tbody", "(replay)")

	do("edit and replay", chromedp.Focus("#edit"), chromedp.SendKeys("#edit", "\r"), chromedp.WaitVisible("#editor"),
		chromedp.SetValue("#edit-path", "/edited"), chromedp.SetValue("#edit-method", "POST"), chromedp.SendKeys("#edit-path", "\r"))
	waitText("#replay-result", "Replayed POST /edited: 200")
	if g := <-got; g != "POST /edited Bearer visitor-s3cret" {
		t.Fatalf("the edited replay reached the app as %q", g)
	}
	rows, err := chromedp.Run(b, chromedp.Evaluate[int](`document.querySelectorAll("#list tbody tr").length`))
	if err != nil || rows < 3 {
		t.Fatalf("rows %d, %v; want the request and its two replays", rows, err)
	}
	shot("replayed")
}
