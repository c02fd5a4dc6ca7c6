package edge_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

// fixed creates an http_response backend answering body.
func (e *env) fixed(body string) string {
	e.t.Helper()
	return e.create("/backends/http_response", map[string]any{"status_code": 200, "body": body})
}

// edgeWith creates an HTTPS edge on host (reserved first) with modules, and one route "/"
// to backendID with routeModules.
func (e *env) edgeWith(host string, modules map[string]any, backendID string, routeModules map[string]any) string {
	e.t.Helper()
	e.domain(host)
	body := map[string]any{"hostports": []string{host + ":443"}}
	for k, v := range modules {
		body[k] = v
	}
	edgeID := e.create("/edges/https", body)
	route := map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": backendID}}
	for k, v := range routeModules {
		route[k] = v
	}
	e.create("/edges/https/"+edgeID+"/routes", route)
	return edgeID
}

// TestMutualTLS: a client certificate of the module's CA is let through; one of another
// CA, or none, fails the handshake.
func TestMutualTLS(t *testing.T) {
	e := newEnv(t)
	clients, strangers := newCA(t, "clients"), newCA(t, "strangers")
	caID := e.create("/certificate_authorities", map[string]any{"ca_pem": clients.pem})
	e.edgeWith("mtls.example.test", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{caID}}}, e.fixed("hello client"), nil)
	if status, body, _ := e.get(e.client(clients.keyPair(t, "alice", true)), "https://mtls.example.test/"); status != 200 || body != "hello client" {
		t.Fatalf("a client of the CA: %d %q", status, body)
	}
	for what, c := range map[string]*http.Client{"another CA": e.client(strangers.keyPair(t, "mallory", true)), "no certificate": e.client()} {
		if resp, err := c.Get("https://mtls.example.test/"); err == nil {
			resp.Body.Close()
			t.Fatalf("%s: served %d", what, resp.StatusCode)
		}
	}
	// Another edge of the same listener asks for no certificate (the configuration is per name).
	e.edgeWith("open.example.test", nil, e.fixed("open"), nil)
	if status, _, _ := e.get(e.client(), "https://open.example.test/"); status != 200 {
		t.Fatalf("an edge without mutual TLS: %d", status)
	}
}

// TestMinVersion: a client below the tls_termination module's min_version fails the handshake.
func TestMinVersion(t *testing.T) {
	e := newEnv(t)
	e.edgeWith("tls13.example.test", map[string]any{"tls_termination": map[string]any{"min_version": "1.3"}}, e.fixed("modern"), nil)
	old := e.client()
	old.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS12
	if resp, err := old.Get("https://tls13.example.test/"); err == nil {
		resp.Body.Close()
		t.Fatal("a TLS 1.2 client was served by a min_version 1.3 edge")
	}
	if status, body, _ := e.get(e.client(), "https://tls13.example.test/"); status != 200 || body != "modern" {
		t.Fatalf("a TLS 1.3 client: %d %q", status, body)
	}
}

// ipPolicy creates an IP policy with one rule.
func (e *env) ipPolicy(cidr, action string) string {
	e.t.Helper()
	p := e.create("/ip_policies", map[string]any{})
	e.create("/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": cidr, "action": action})
	return p
}

// TestIPRestrictionModule: a route's ip_restriction lets the visitor's address through when
// a policy allows it, and refuses it (403 ERR_8003) when one denies it.
func TestIPRestrictionModule(t *testing.T) {
	e := newEnv(t)
	allow, deny := e.ipPolicy("127.0.0.0/8", "allow"), e.ipPolicy("127.0.0.1/32", "deny")
	e.edgeWith("allow.example.test", nil, e.fixed("in"), map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{allow}}})
	e.edgeWith("deny.example.test", nil, e.fixed("in"), map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{allow, deny}}})
	if status, body, _ := e.get(e.client(), "https://allow.example.test/"); status != 200 || body != "in" {
		t.Fatalf("allowed: %d %q", status, body)
	}
	e.expectPage(e.client(), "https://deny.example.test/", http.StatusForbidden, "ERR_8003")
}

// TestEndpointsRestriction: the account's IP restriction of type endpoints refuses traffic
// to all its edges when enforced, and only logs when not.
func TestEndpointsRestriction(t *testing.T) {
	e := newEnv(t)
	e.edgeWith("acct.example.test", nil, e.fixed("in"), nil)
	restriction := e.create("/ip_restrictions", map[string]any{"type": "endpoints", "enforced": true, "ip_policy_ids": []string{e.ipPolicy("192.0.2.0/24", "allow")}})
	e.expectPage(e.client(), "https://acct.example.test/", http.StatusForbidden, "ERR_8003")
	e.api("PATCH", "/ip_restrictions/"+restriction, map[string]any{"enforced": false})
	if status, _, _ := e.get(e.client(), "https://acct.example.test/"); status != 200 {
		t.Fatalf("a restriction not enforced blocked: %d", status)
	}
	if e.logs.FilterMessageSnippet("would block").Len() == 0 {
		t.Fatal("the dry run was not logged")
	}
}

// TestAccessLogAndMetrics: a request is counted per edge and route and logged without its
// cookies, Authorization header or query.
func TestAccessLogAndMetrics(t *testing.T) {
	e := newEnv(t)
	edgeID := e.edgeWith("log.example.test", nil, e.fixed("logged"), nil)
	e.get(e.client(), "https://log.example.test/p?token=query-secret", "Cookie", "session=cookie-secret", "Authorization", "Bearer auth-secret")
	lines := e.logs.FilterMessage("edge request").All()
	if len(lines) != 1 || lines[0].ContextMap()["edge_id"] != edgeID || lines[0].ContextMap()["status"] != int64(200) {
		t.Fatalf("access lines: %+v", lines)
	}
	for _, l := range e.logs.All() {
		for _, v := range l.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, "secret") {
				t.Fatalf("a secret reached the log: %s %v", l.Message, l.ContextMap())
			}
		}
	}
	families, err := e.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() != "warren_edge_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			found = found || labels["edge"] == edgeID && labels["class"] == "2xx" && m.GetCounter().GetValue() == 1
		}
	}
	if !found {
		t.Fatal("the request was not counted under its edge")
	}
}
