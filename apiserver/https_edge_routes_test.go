package apiserver_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zapcore"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

func TestRouteShapes(t *testing.T) {
	c, logs := observed(t, zapcore.DebugLevel)
	f := newEdgeFixtures(t, c, "app.example.com")
	edge := str(c.ok(201, "POST", "/edges/https", map[string]any{"hostports": []string{"app.example.com:443"}})["id"])
	routes := "/edges/https/" + edge + "/routes"
	first := c.ok(201, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/", "edge_id": edge})
	equal(t, "bare route", first, map[string]any{
		"id": first["id"], "uri": c.uri(routes + "/" + str(first["id"])), "created_at": first["created_at"],
		"edge_id": edge, "match_type": "path_prefix", "match": "/",
		"backend": nil, "ip_restriction": nil, "circuit_breaker": nil, "compression": nil, "request_headers": nil,
		"response_headers": nil, "webhook_verification": nil, "oauth": nil, "saml": nil, "oidc": nil,
		"websocket_tcp_converter": nil, "user_agent_filter": nil, "traffic_policy": nil, "policy": nil,
	})
	equal(t, "route prefix", strings.HasPrefix(str(first["id"]), "edghtsrt_"), true)

	r := c.ok(201, "POST", routes, map[string]any{
		"match_type": "exact_path", "match": "/api", "description": "d", "metadata": "m",
		"backend":                 map[string]any{"backend_id": f.backend},
		"ip_restriction":          map[string]any{"ip_policy_ids": []string{f.policy}},
		"circuit_breaker":         map[string]any{"error_threshold_percentage": 0.5},
		"compression":             map[string]any{},
		"request_headers":         map[string]any{"add": map[string]string{"X-Env": "prod"}},
		"response_headers":        map[string]any{"remove": []string{"server"}},
		"webhook_verification":    map[string]any{"provider": "TWILIO", "secret": "whsec-route-secret"},
		"oidc":                    map[string]any{"issuer": "https://idp.example.com", "client_id": "cid", "client_secret": "oidc-client-secret"},
		"websocket_tcp_converter": map[string]any{"enabled": false},
		"user_agent_filter":       map[string]any{"deny": []string{"(?i)bot"}},
		"traffic_policy":          map[string]any{"value": httpPolicy},
	})
	id := str(r["id"])
	equal(t, "backend", r["backend"], map[string]any{"enabled": true, "backend": c.ref("/backends/static", f.backend)})
	equal(t, "ip_restriction", r["ip_restriction"], map[string]any{"enabled": true, "ip_policies": []any{c.ref("/ip_policies", f.policy)}})
	equal(t, "circuit_breaker", r["circuit_breaker"], map[string]any{"enabled": true, "tripped_duration": float64(10), "rolling_window": float64(10), "num_buckets": float64(10), "volume_threshold": float64(20), "error_threshold_percentage": 0.5})
	equal(t, "compression", r["compression"], map[string]any{"enabled": true})
	equal(t, "request_headers", r["request_headers"], map[string]any{"enabled": true, "add": map[string]any{"x-env": "prod"}, "remove": []any{}})
	equal(t, "response_headers", r["response_headers"], map[string]any{"enabled": true, "add": map[string]any{}, "remove": []any{"server"}})
	equal(t, "webhook_verification (secret in clear, provider as given)", r["webhook_verification"], map[string]any{"enabled": true, "provider": "TWILIO", "secret": "whsec-route-secret"})
	equal(t, "oidc", r["oidc"], map[string]any{"enabled": true, "options_passthrough": false, "cookie_prefix": "", "inactivity_timeout": float64(0), "maximum_duration": float64(0), "issuer": "https://idp.example.com", "client_id": "cid", "client_secret": "oidc-client-secret", "scopes": []any{}, "email_addresses": []any{}, "email_domains": []any{}})
	equal(t, "websocket_tcp_converter", r["websocket_tcp_converter"], map[string]any{"enabled": false})
	equal(t, "user_agent_filter", r["user_agent_filter"], map[string]any{"enabled": true, "allow": []any{}, "deny": []any{"(?i)bot"}})
	equal(t, "traffic_policy", r["traffic_policy"], map[string]any{"enabled": true, "value": httpPolicy})
	equal(t, "GET", c.ok(200, "GET", routes+"/"+id, nil), r)

	// The edge lists its routes in creation order, in full.
	equal(t, "edge routes", c.ok(200, "GET", "/edges/https/"+edge, nil)["routes"], []any{first, r})

	// Auth modules: one per route, one route per edge.
	c.fails(400, "ERR_7079", "PUT", routes+"/"+id+"/oauth", map[string]any{"provider": map[string]any{"google": map[string]any{}}})
	c.fails(400, "ERR_7155", "PUT", routes+"/"+str(first["id"])+"/saml", map[string]any{"idp_metadata": samlMetadata(t)})
	c.ok(204, "DELETE", routes+"/"+id+"/oidc", nil)
	oauth := c.ok(200, "PUT", routes+"/"+id+"/oauth", map[string]any{"module": map[string]any{"provider": map[string]any{"google": map[string]any{}}}})
	equal(t, "oauth provider", oauth["provider"].(map[string]any)["google"].(map[string]any)["client_id"], nil)
	c.ok(204, "DELETE", routes+"/"+id+"/oauth", nil)

	// SAML: derived members, and a signing certificate made once for the route's life.
	saml := c.ok(200, "PUT", routes+"/"+id+"/saml", map[string]any{"idp_metadata": samlMetadata(t)})
	entity := c.uri("/saml/" + id)
	equal(t, "saml derived", []any{saml["entity_id"], saml["metadata_url"], saml["assertion_consumer_service_url"], saml["single_logout_url"], saml["idp_metadata_url"]},
		[]any{entity, entity, entity + "/acs", entity + "/slo", ""})
	block, _ := pem.Decode([]byte(str(saml["request_signing_certificate_pem"])))
	if block == nil {
		t.Fatalf("no certificate: %v", saml)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "certificate subject", cert.Subject.CommonName, entity)
	equal(t, "self-signed", cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature), nil)
	again := c.ok(200, "PUT", routes+"/"+id+"/saml", map[string]any{"idp_metadata": samlMetadata(t), "force_authn": true})
	equal(t, "same certificate after PUT", again["request_signing_certificate_pem"], saml["request_signing_certificate_pem"])
	c.ok(204, "DELETE", routes+"/"+id+"/saml", nil)
	again = c.ok(200, "PATCH", routes+"/"+id, map[string]any{"saml": map[string]any{"idp_metadata": samlMetadata(t)}})
	equal(t, "same certificate after DELETE and PATCH", again["saml"].(map[string]any)["request_signing_certificate_pem"], saml["request_signing_certificate_pem"])
	equal(t, "GET saml", c.ok(200, "GET", routes+"/"+id+"/saml", nil), again["saml"])
	if strings.Contains(c.ok(200, "GET", routes+"/"+id, nil)["saml"].(map[string]any)["request_signing_certificate_pem"].(string), "PRIVATE KEY") {
		t.Fatal("the private key reached a response")
	}

	// PATCH keeps what is omitted and checks match changes.
	p := c.ok(200, "PATCH", routes+"/"+id, map[string]any{"match": "/v2"})
	equal(t, "patched match", []any{p["match_type"], p["match"], p["backend"]}, []any{"exact_path", "/v2", r["backend"]})
	noSecrets(t, logs, "whsec-route-secret", "oidc-client-secret", "PRIVATE KEY")
}

func TestRouteValidation(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")
	edge := str(c.ok(201, "POST", "/edges/https", nil)["id"])
	other := str(c.ok(201, "POST", "/edges/https", nil)["id"])
	routes := "/edges/https/" + edge + "/routes"
	route := func(extra map[string]any) map[string]any {
		body := map[string]any{"match_type": "path_prefix", "match": "/x"}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	for _, tt := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"match": "/x"}, "ERR_7130"},
		{map[string]any{"match_type": "regex", "match": "/x"}, "ERR_7130"},
		{map[string]any{"match_type": "exact_path"}, "ERR_7123"},
		{map[string]any{"match_type": "exact_path", "match": "example.com/x"}, "ERR_7131"},
		{route(map[string]any{"edge_id": other}), "ERR_7110"},
		{route(map[string]any{"description": strings.Repeat("x", 256)}), "ERR_7073"},
		{route(map[string]any{"backend": map[string]any{"backend_id": f.policy}}), "ERR_6526"},
		{route(map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{"ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}}}), "ERR_7007"},
		{route(map[string]any{"circuit_breaker": map[string]any{"num_buckets": 129}}), "ERR_7018"},
		{route(map[string]any{"request_headers": map[string]any{"add": map[string]string{"X-A": "1", "x-a": "2"}}}), "ERR_7069"},
		{route(map[string]any{"webhook_verification": map[string]any{"provider": "sns", "secret": "s"}}), "ERR_7026"},
		{route(map[string]any{"webhook_verification": map[string]any{"provider": "sendgrid", "secret": "not a public key"}}), "ERR_7107"},
		{route(map[string]any{"user_agent_filter": map[string]any{"deny": []string{"("}}}), "ERR_2090"},
		{route(map[string]any{"traffic_policy": map[string]any{"value": tcpPolicy}}), "ERR_2248"},
		{route(map[string]any{"oauth": map[string]any{"provider": map[string]any{}}}), "ERR_7037"},
		{route(map[string]any{"oidc": map[string]any{"issuer": "https://i.example.com"}}), "ERR_7089"},
		{route(map[string]any{"saml": map[string]any{"idp_metadata": "<x/>"}}), "ERR_7083"},
		{route(map[string]any{"oidc": map[string]any{"issuer": "https://i.example.com", "client_id": "a", "client_secret": "b"}, "oauth": map[string]any{"provider": map[string]any{"google": map[string]any{}}}}), "ERR_7079"},
	} {
		c.fails(400, tt.code, "POST", routes, tt.body)
	}
	equal(t, "nothing stored", c.ok(200, "GET", "/edges/https/"+edge, nil)["routes"], []any{})

	id := str(c.ok(201, "POST", routes, route(nil))["id"])
	c.fails(400, "ERR_7126", "POST", routes, map[string]any{"match_type": "exact_path", "match": "/x"})
	c.ok(201, "POST", "/edges/https/"+other+"/routes", route(nil)) // unique per edge only
	second := str(c.ok(201, "POST", routes, map[string]any{"match_type": "exact_path", "match": "/y"})["id"])
	c.fails(400, "ERR_7126", "PATCH", routes+"/"+second, map[string]any{"match": "/x"})
	c.fails(400, "ERR_7110", "PATCH", routes+"/"+id, map[string]any{"edge_id": other})

	// A route lives under its edge only; the edge must be the caller's.
	equal(t, "under another edge", c.req("GET", "/edges/https/"+other+"/routes/"+id, nil).status, 404)
	equal(t, "missing edge", c.req("POST", "/edges/https/edghts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue/routes", route(nil)).status, 404)
	c.fails(400, "ERR_227", "GET", "/edges/https/"+f.policy+"/routes/"+id, nil)
	equal(t, "no list of routes", c.req("GET", routes, nil).status, 404)
	stranger := c.as(c.srv.NewAccount(t))
	equal(t, "other account POST", stranger.req("POST", routes, route(map[string]any{"match": "/z"})).status, 404)
	equal(t, "other account GET", stranger.req("GET", routes+"/"+id, nil).status, 404)
	equal(t, "other account module", stranger.req("PUT", routes+"/"+id+"/compression", map[string]any{}).status, 404)
}

// TestRouteCascade: deleting an edge deletes its routes, which release what they used.
// TestOIDCEmailRules: the oidc module's email_addresses and email_domains (our extension)
// take the values an OAuth provider's lists take and refuse the others with the same codes;
// a refused write changes nothing.
func TestOIDCEmailRules(t *testing.T) {
	c := newTC(t)
	edge := str(c.ok(201, "POST", "/edges/https", nil)["id"])
	routes := "/edges/https/" + edge + "/routes"
	oidc := func(lists map[string]any) map[string]any {
		m := map[string]any{"issuer": "https://idp.example.com", "client_id": "cid", "client_secret": "s"}
		for k, v := range lists {
			m[k] = v
		}
		return m
	}
	id := str(c.ok(201, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/", "oidc": oidc(nil)})["id"])
	good := c.ok(200, "PUT", routes+"/"+id+"/oidc", oidc(map[string]any{"email_addresses": []string{"alice@example.com", "b@xn--bcher-kva.example"}, "email_domains": []string{"corp.example"}}))
	equal(t, "lists", []any{good["email_addresses"], good["email_domains"]}, []any{[]any{"alice@example.com", "b@xn--bcher-kva.example"}, []any{"corp.example"}})

	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, tt := range []struct {
		field  string
		values []string
		code   string
	}{
		{"email_addresses", []string{"Alice@example.com"}, "ERR_7067"},
		{"email_addresses", []string{"example.com"}, "ERR_7043"},
		{"email_addresses", []string{"a@xn--99999999999.com"}, "ERR_7044"},
		{"email_addresses", []string{"a@example.com", "a@example.com"}, "ERR_7046"},
		{"email_addresses", []string{""}, "ERR_7051"},
		{"email_addresses", many(1001, func(i int) string { return fmt.Sprintf("u%d@example.com", i) }), "ERR_7060"},
		{"email_addresses", []string{strings.Repeat("a", 250) + "@example.com"}, "ERR_7139"},
		{"email_domains", []string{"Corp.example"}, "ERR_7068"},
		{"email_domains", []string{"corp"}, "ERR_7039"},
		{"email_domains", []string{"xn--99999999999.com"}, "ERR_7045"},
		{"email_domains", []string{"corp.example", "corp.example"}, "ERR_7047"},
		{"email_domains", []string{" "}, "ERR_7052"},
		{"email_domains", many(101, func(i int) string { return fmt.Sprintf("d%d.example", i) }), "ERR_7061"},
		{"email_domains", []string{strings.Repeat("a.", 127) + "com"}, "ERR_7140"},
	} {
		lists := map[string]any{tt.field: tt.values}
		oauth := c.fails(400, tt.code, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/oauth", "oauth": map[string]any{"provider": map[string]any{"google": lists}}})
		equal(t, tt.code+" oauth param", oauth["details"].(map[string]any)["param"], "oauth.provider.google."+tt.field)
		put := c.fails(400, tt.code, "PUT", routes+"/"+id+"/oidc", oidc(lists))
		equal(t, tt.code+" oidc PUT param", put["details"].(map[string]any)["param"], tt.field)
		post := c.fails(400, tt.code, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/oidc", "oidc": oidc(lists)})
		equal(t, tt.code+" oidc POST param", post["details"].(map[string]any)["param"], "oidc."+tt.field)
	}
	equal(t, "unchanged", c.ok(200, "GET", routes+"/"+id+"/oidc", nil), good)
	equal(t, "no other route", len(c.ok(200, "GET", "/edges/https/"+edge, nil)["routes"].([]any)), 1)
}

func TestRouteCascade(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")
	edge := str(c.ok(201, "POST", "/edges/https", map[string]any{"hostports": []string{"app.example.com:443"}})["id"])
	routes := "/edges/https/" + edge + "/routes"
	id := str(c.ok(201, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": f.backend}})["id"])
	c.fails(400, "ERR_6502", "DELETE", "/backends/static/"+f.backend, nil)
	c.ok(204, "DELETE", routes+"/"+id, nil)
	c.ok(201, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": f.backend}})
	c.ok(201, "POST", routes, map[string]any{"match_type": "path_prefix", "match": "/b"})
	c.ok(204, "DELETE", "/edges/https/"+edge, nil)
	equal(t, "route gone", c.req("GET", routes+"/"+id, nil).status, 404)
	c.ok(204, "DELETE", "/backends/static/"+f.backend, nil)
	c.ok(204, "DELETE", "/reserved_domains/"+f.domainID, nil)
}

// TestRouteParentRace races deleting an edge against creating a route under it; afterwards
// no stored route outlives its edge.
func TestRouteParentRace(t *testing.T) {
	c := newTC(t)
	for range 20 {
		edge := str(c.ok(201, "POST", "/edges/https", nil)["id"])
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); c.req("DELETE", "/edges/https/"+edge, nil) }()
		go func() {
			defer wg.Done()
			c.req("POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/"})
		}()
		wg.Wait()
	}
	listed := 0
	for _, e := range c.ok(200, "GET", "/edges/https", nil)["https_edges"].([]any) {
		listed += len(e.(map[string]any)["routes"].([]any))
	}
	ctx := context.Background()
	var stored int
	err := c.srv.Store.Read(ctx, func(tx store.Tx) (err error) {
		stored, err = tx.Count(ctx, "https_edge_route", c.srv.AccountID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "stored routes are the routes of existing edges", stored, listed)
}

// TestAuthRouteRace creates routes with OIDC on one edge concurrently: one succeeds, the
// others are ERR_7155.
func TestAuthRouteRace(t *testing.T) {
	c := newTC(t)
	edge := str(c.ok(201, "POST", "/edges/https", nil)["id"])
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.req("POST", "/edges/https/"+edge+"/routes", map[string]any{
				"match_type": "path_prefix", "match": "/" + strconv.Itoa(i),
				"oidc": map[string]any{"issuer": "https://idp.example.com", "client_id": "a", "client_secret": "b"},
			}).status
		}()
	}
	wg.Wait()
	slices.Sort(statuses)
	equal(t, "one created, the others refused", statuses, []int{201, 400, 400, 400, 400, 400})
	equal(t, "routes with auth", len(c.ok(200, "GET", "/edges/https/"+edge, nil)["routes"].([]any)), 1)
}
