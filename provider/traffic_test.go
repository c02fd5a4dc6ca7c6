package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestAccTrafficThroughEdge applies an HTTPS edge with routes on a domain with an uploaded
// certificate, connects a real agent in the route's tunnel group, and sends requests through
// the edge's HTTPS listener to the agent's app; then changes the route's modules and sees
// the edge behave accordingly.
func TestAccTrafficThroughEdge(t *testing.T) {
	env := newAccEnv(t)
	edge := env.srv.StartEdge(t)
	pki := newTestPKI(t, "shop.example.test")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app: %s %s from %s", r.Method, r.URL.Path, r.Header.Get("X-Forwarded-For"))
	}))
	t.Cleanup(app.Close)
	cred, err := env.client.Credentials.Create(context.Background(), api.CredentialCreate{ACL: []string{"bind:app=shop"}})
	if err != nil {
		t.Fatal(err)
	}
	env.srv.StartAgent(t, agentclient.Config{Authtoken: *cred.Token, Tunnels: []agentclient.TunnelConfig{
		{Proto: "http", Labels: map[string]string{"app": "shop"}, ForwardsTo: app.URL},
	}})

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(pki.caPEM))
	visitor := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, edge.HTTPS)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
	// expect checks what a visitor gets for path: the status, a piece of the body and, when
	// header is set, that response header's value.
	expect := func(path string, status int, body, header, value string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			resp, err := visitor.Get("https://shop.example.test" + path)
			if err != nil {
				return fmt.Errorf("GET %s through the edge: %w", path, err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != status || !strings.Contains(string(b), body) {
				return fmt.Errorf("GET %s through the edge: %d %q, want %d with %q", path, resp.StatusCode, b, status, body)
			}
			if header != "" && resp.Header.Get(header) != value {
				return fmt.Errorf("GET %s through the edge: %s is %q, want %q", path, header, resp.Header.Get(header), value)
			}
			return nil
		}
	}

	config := func(routeModules string) string {
		return env.config(`
resource "warren_tls_certificate" "shop" {
  certificate_pem = %q
  private_key_pem = %q
}

resource "warren_reserved_domain" "shop" {
  domain         = "shop.example.test"
  certificate_id = warren_tls_certificate.shop.id
}

resource "warren_tunnel_group_backend" "shop" {
  labels = { app = "shop" }
}

resource "warren_http_response_backend" "health" {
  status_code = 200
  body        = "healthy"
}

resource "warren_ip_policy" "office" {}

resource "warren_ip_policy_rule" "office" {
  ip_policy_id = warren_ip_policy.office.id
  cidr         = "198.51.100.0/24"
  action       = "allow"
}

resource "warren_https_edge" "shop" {
  hostports = ["${warren_reserved_domain.shop.domain}:443"]
}

resource "warren_https_edge_route" "shop" {
  edge_id    = warren_https_edge.shop.id
  match_type = "path_prefix"
  match      = "/"
  backend    = { backend_id = warren_tunnel_group_backend.shop.id }
%s
}

resource "warren_https_edge_route" "health" {
  edge_id    = warren_https_edge.shop.id
  match_type = "exact_path"
  match      = "/healthz"
  backend    = { backend_id = warren_http_response_backend.health.id }
}
`, pki.certPEM, pki.keyPEM, routeModules)
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config: config(""),
				Check: resource.ComposeTestCheckFunc(
					expect("/cart", 200, "app: GET /cart from 127.0.0.1", "", ""),
					expect("/healthz", 200, "healthy", "", ""),
				),
			},
			{
				// A module changed: the app's answers now carry a header.
				Config: config(`  response_headers = { add = { "x-served-by" = "warren" } }`),
				Check:  expect("/cart", 200, "app: GET /cart", "X-Served-By", "warren"),
			},
			{
				// Only the office network may reach the shop now: this visitor is refused,
				// and the health route, without the module, still answers.
				Config: config(`  ip_restriction = { ip_policy_ids = [warren_ip_policy.office.id] }
  depends_on     = [warren_ip_policy_rule.office]`),
				Check: resource.ComposeTestCheckFunc(
					expect("/cart", 403, "ERR_8003", "Warren-Error-Code", "ERR_8003"),
					expect("/healthz", 200, "healthy", "", ""),
				),
			},
		},
	})
}
