package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// The PostgreSQL runs share one throwaway cluster, stopped when the tests end.
func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// tc is a test client that speaks raw HTTP to a test server, so tests see the exact wire.
type tc struct {
	t     *testing.T
	srv   *apiservertest.Server
	token string
}

// newTC starts a test server (configure may change its options) and a client of its
// bootstrap admin.
func newTC(t *testing.T, configure ...func(*apiserver.Options)) *tc {
	t.Helper()
	srv := apiservertest.Start(t, configure...)
	return &tc{t: t, srv: srv, token: srv.APIKey}
}

// onEachDatabase runs test against a fresh server on SQLite and on PostgreSQL, as subtests;
// configure may change the servers' options.
func onEachDatabase(t *testing.T, test func(t *testing.T, c *tc), configure ...func(*apiserver.Options)) {
	t.Run("sqlite", func(t *testing.T) { test(t, newTC(t, configure...)) })
	t.Run("postgres", func(t *testing.T) {
		dsn := pgcluster.Database(t)
		srv := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
			return postgres.Open(ctx, dsn, seal)
		}, configure...)
		test(t, &tc{t: t, srv: srv, token: srv.APIKey})
	})
}

// as returns a client of the same server that authenticates with another token.
func (c *tc) as(token string) *tc { return &tc{t: c.t, srv: c.srv, token: token} }

// response is a decoded reply.
type response struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// req sends a request with the standard headers; body may be nil, a string (sent raw) or a
// value (sent as JSON). Headers in hdr replace the standard ones; an empty value removes one.
func (c *tc) req(method, path string, body any, hdr ...string) response {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	httpReq, err := c.request(method, path, r, hdr...)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(httpReq)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	checkOpenAPI(c.t, httpReq, resp.StatusCode, resp.Header, data)
	out := response{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out.body); err != nil {
			c.t.Fatalf("%s %s: response is not a JSON object: %q", method, path, data)
		}
	}
	return out
}

// request builds a request with the standard headers (a JSON Content-Type when there is a
// body) to path on the test server, or to a whole URL. Headers in hdr replace the standard
// ones; an empty value removes one.
func (c *tc) request(method, path string, body io.Reader, hdr ...string) (*http.Request, error) {
	url := path
	if !strings.HasPrefix(path, "http") {
		url = c.srv.URL + path
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Service-Version", "2")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return req, nil
}

// ok sends a request and fails the test unless the status is want.
func (c *tc) ok(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	r := c.req(method, path, body)
	if r.status != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r.body
}

// fails sends a request and checks the status and error code of the error body.
func (c *tc) fails(status int, code, method, path string, body any, hdr ...string) map[string]any {
	c.t.Helper()
	r := c.req(method, path, body, hdr...)
	if r.status != status || str(r.body["error_code"]) != code || num(r.body["status_code"]) != status {
		c.t.Fatalf("%s %s: got %d %v, want %d %s: %s", method, path, r.status, r.body["error_code"], status, code, r.raw)
	}
	details, _ := r.body["details"].(map[string]any)
	if !strings.HasPrefix(str(details["operation_id"]), "op_") {
		c.t.Fatalf("%s %s: details.operation_id missing: %s", method, path, r.raw)
	}
	if r.header.Get("Service-Operation-Id") != details["operation_id"] {
		c.t.Fatalf("%s %s: operation id header %q differs from the body", method, path, r.header.Get("Service-Operation-Id"))
	}
	for k, v := range details {
		if _, isString := v.(string); !isString {
			c.t.Fatalf("details.%s is not a string: %s", k, r.raw)
		}
	}
	return r.body
}

func str(v any) string { s, _ := v.(string); return s }
func num(v any) int    { f, _ := v.(float64); return int(f) }

// keysOf returns the sorted member names of an object, to pin a wire shape.
func keysOf(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %#v, want %#v", what, got, want)
	}
}

func urlEscape(s string) string { return url.QueryEscape(s) }
