package browsertest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A page served over TLS by a host name the machine cannot resolve: the browser reaches it
// through the host resolver rule and accepts the test server's certificate.
func TestBrowserReachesNamedTLSHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body><p id=host>%s</p></body></html>", r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ctx := New(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("https://app.example.test:"+port+"/")); err != nil {
		t.Fatal(err)
	}
	host, err := chromedp.Run(ctx, chromedp.Text("#host"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(host, "app.example.test:") {
		t.Fatalf("the page saw host %q", host)
	}
}
