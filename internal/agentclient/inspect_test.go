package agentclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/inspect"
)

// TestForwardInspected: with an inspector, an http stream's requests and answers pass as
// they are, the inspector records them, and its replay reaches the app through the
// forwarder's dial.
func TestForwardInspected(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(httpApp))
	defer app.Close()
	for _, kind := range streamKinds {
		t.Run(kind.name, func(t *testing.T) {
			noLeaks(t)
			in := inspect.New(inspect.Options{})
			f, _ := newForwarder(t, ForwardOptions{Inspector: in})
			edge, done := serve(t.Context(), t, kind, f, header("http"), app.URL)
			br := bufio.NewReader(edge)
			if got, want := exchange(t, edge, br, "POST /hello HTTP/1.1\r\nHost: app.example.com\r\nAuthorization: Bearer s3cret\r\nContent-Length: 5\r\n\r\nhello"),
				"200 POST /hello host=app.example.com body=hello alpn="; got != want {
				t.Errorf("answer %q, want %q", got, want)
			}
			_ = edge.Close()
			<-done // Serve waits for the inspector's parse

			page := httptest.NewServer(in.Handler())
			defer page.Close()
			var list struct{ Exchanges []inspect.Exchange }
			getJSON(t, page.URL+"/api/exchanges", &list)
			if len(list.Exchanges) != 1 {
				t.Fatalf("exchanges = %+v, want one", list.Exchanges)
			}
			e := list.Exchanges[0]
			if e.Method != "POST" || e.Path != "/hello" || e.Status != 200 || string(e.ReqBody) != "hello" ||
				string(e.RespBody) != "POST /hello host=app.example.com body=hello alpn=" || e.TunnelID != "tn_1" {
				t.Errorf("exchange = %+v", e)
			}
			if b, _ := json.Marshal(e); bytes.Contains(b, []byte("s3cret")) {
				t.Errorf("the Authorization header shows: %s", b)
			}

			resp, err := http.Post(page.URL+"/api/exchanges/1/replay", "application/json", strings.NewReader(`{"body":"again"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var replay inspect.Exchange
			_ = json.NewDecoder(resp.Body).Decode(&replay)
			if resp.StatusCode != 200 || string(replay.RespBody) != "POST /hello host=app.example.com body=again alpn=" {
				t.Errorf("replay = %d %+v", resp.StatusCode, replay)
			}
		})
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %s: %v", url, b, err)
	}
}
