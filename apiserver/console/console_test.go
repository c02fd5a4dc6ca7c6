package console_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/console"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func get(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// The console's files come with the strict CSP and load nothing from elsewhere nor inline;
// families.json is the family table; /console redirects; only GET and HEAD.
func TestConsoleServesItsFiles(t *testing.T) {
	srv := apiservertest.Start(t, func(o *apiserver.Options) { o.Console = true })
	resp, page := get(t, "GET", srv.URL+"/console/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET /console/: %d, headers %v", resp.StatusCode, resp.Header)
	}
	for _, bad := range []string{"http://", "https://", "<script>", "<style", "style=", "onclick", "onload"} {
		if strings.Contains(page, bad) {
			t.Fatalf("the page holds %q (another origin or inline code, which the CSP refuses)", bad)
		}
	}
	for _, file := range []string{"console.js", "console.css"} {
		resp, body := get(t, "GET", srv.URL+"/console/"+file)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.CSP || strings.Contains(body, "https://") {
			t.Fatalf("GET /console/%s: %d", file, resp.StatusCode)
		}
	}
	if !strings.Contains(console.CSP, "script-src 'self';") || strings.Contains(console.CSP, "unsafe") {
		t.Fatalf("the CSP is not strict: %s", console.CSP)
	}

	_, raw := get(t, "GET", srv.URL+"/console/families.json")
	var fams []struct{ Path, Member, Prefix string }
	if err := json.Unmarshal([]byte(raw), &fams); err != nil {
		t.Fatal(err)
	}
	if len(fams) != len(api.Families)-1 || fams[0].Path != api.Families[0].Path || fams[0].Member != api.Families[0].Member {
		t.Fatalf("families.json has %d families (%+v), want the table's %d less the bot_users alias", len(fams), fams[0], len(api.Families))
	}

	if resp, _ := get(t, "GET", srv.URL+"/console"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("GET /console: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get(t, "POST", srv.URL+"/console/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /console/: %d, want 405", resp.StatusCode)
	}
	// The API around it is unchanged.
	if resp, _ := get(t, "GET", srv.URL+"/healthz"); resp.StatusCode != 200 {
		t.Fatalf("GET /healthz beside the console: %d", resp.StatusCode)
	}
}

// Without Options.Console the path is the API's, which knows no such route.
func TestConsoleOff(t *testing.T) {
	srv := apiservertest.Start(t)
	if resp, body := get(t, "GET", srv.URL+"/console/"); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"path":"/console/"`) {
		t.Fatalf("GET /console/ with the console off: %d %s", resp.StatusCode, body)
	}
}
