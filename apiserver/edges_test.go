package apiserver_test

import (
	"os"
	"strings"
	"sync"
	"testing"
)

const (
	tcpPolicy  = `{"on_tcp_connect":[{"expressions":["conn.client_ip == '1.2.3.4'"],"actions":[{"type":"deny"}]}]}`
	httpPolicy = "on_http_request:\n  - expressions:\n      - \"req.method == 'POST'\"\n    actions:\n      - type: deny\n"
)

// edgeFixtures are what edges refer to: a reserved domain and address, a backend, an IP
// policy and a certificate authority of the caller's account.
type edgeFixtures struct {
	domain, domainID, addr, addrID, backend, policy, ca string
}

func newEdgeFixtures(t *testing.T, c *tc, domain string) edgeFixtures {
	t.Helper()
	d := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": domain})
	a := c.ok(201, "POST", "/reserved_addrs", map[string]any{})
	return edgeFixtures{
		domain: domain, domainID: str(d["id"]), addr: str(a["addr"]), addrID: str(a["id"]),
		backend: str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "10.0.0.1:80"})["id"]),
		policy:  str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"]),
		ca:      str(c.ok(201, "POST", "/certificate_authorities", map[string]any{"ca_pem": newPKI(t).root.pem})["id"]),
	}
}

func (c *tc) uri(path string) string { return c.srv.URL + path }

func (c *tc) ref(path, id string) map[string]any {
	return map[string]any{"id": id, "uri": c.uri(path + "/" + id)}
}

func TestEdgeShapes(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")

	tcp := c.ok(201, "POST", "/edges/tcp", map[string]any{
		"description": "d", "metadata": "m", "hostports": []string{f.addr},
		"backend":        map[string]any{"backend_id": f.backend},
		"ip_restriction": map[string]any{"ip_policy_ids": []string{f.policy}},
		"traffic_policy": map[string]any{"value": tcpPolicy, "enabled": false},
	})
	id := str(tcp["id"])
	equal(t, "tcp prefix", strings.HasPrefix(id, "edgtcp_"), true)
	equal(t, "tcp", tcp, map[string]any{
		"id": id, "uri": c.uri("/edges/tcp/" + id), "created_at": tcp["created_at"], "description": "d", "metadata": "m",
		"hostports":      []any{f.addr},
		"backend":        map[string]any{"enabled": true, "backend": c.ref("/backends/static", f.backend)},
		"ip_restriction": map[string]any{"enabled": true, "ip_policies": []any{c.ref("/ip_policies", f.policy)}},
		"traffic_policy": map[string]any{"enabled": false, "value": tcpPolicy},
		"policy":         nil,
	})
	equal(t, "tcp GET", c.ok(200, "GET", "/edges/tcp/"+id, nil), tcp)
	empty := c.ok(201, "POST", "/edges/tcp", nil)
	equal(t, "tcp without anything", keysOf(empty), []string{"backend", "created_at", "hostports", "id", "ip_restriction", "policy", "traffic_policy", "uri"})
	equal(t, "hostports never set", empty["hostports"], nil)
	list := c.ok(200, "GET", "/edges/tcp", nil)
	equal(t, "tcp list", len(list["tcp_edges"].([]any)), 2)

	f2 := newEdgeFixtures(t, c, "tls.example.com")
	tls := c.ok(201, "POST", "/edges/tls", map[string]any{
		"hostports":       []string{"TLS.example.com:443"},
		"backend":         map[string]any{"backend_id": f2.backend},
		"ip_restriction":  map[string]any{"ip_policy_ids": []string{f2.policy, f.policy}},
		"mutual_tls":      map[string]any{"certificate_authority_ids": []string{f2.ca}},
		"tls_termination": map[string]any{"min_version": "1.3"},
		"traffic_policy":  map[string]any{"value": tcpPolicy},
	})
	tlsID := str(tls["id"])
	equal(t, "tls", tls, map[string]any{
		"id": tlsID, "uri": c.uri("/edges/tls/" + tlsID), "created_at": tls["created_at"],
		"hostports":       []any{"tls.example.com:443"},
		"backend":         map[string]any{"enabled": true, "backend": c.ref("/backends/static", f2.backend)},
		"ip_restriction":  map[string]any{"enabled": true, "ip_policies": []any{c.ref("/ip_policies", f2.policy), c.ref("/ip_policies", f.policy)}},
		"mutual_tls":      map[string]any{"enabled": true, "certificate_authorities": []any{c.ref("/certificate_authorities", f2.ca)}},
		"tls_termination": map[string]any{"enabled": true, "terminate_at": "edge", "min_version": "1.3"},
		"traffic_policy":  map[string]any{"enabled": true, "value": tcpPolicy},
		"policy":          nil,
	})

	https := c.ok(201, "POST", "/edges/https", map[string]any{
		"hostports":       []string{"app.example.com:443"},
		"mutual_tls":      map[string]any{"certificate_authority_ids": []string{f.ca}},
		"tls_termination": map[string]any{"enabled": false},
	})
	httpsID := str(https["id"])
	equal(t, "https", https, map[string]any{
		"id": httpsID, "uri": c.uri("/edges/https/" + httpsID), "created_at": https["created_at"],
		"hostports":       []any{"app.example.com:443"},
		"mutual_tls":      map[string]any{"enabled": true, "certificate_authorities": []any{c.ref("/certificate_authorities", f.ca)}},
		"tls_termination": map[string]any{"enabled": false, "terminate_at": "edge", "min_version": nil},
		"routes":          []any{},
	})
	equal(t, "https list", c.ok(200, "GET", "/edges/https", nil)["https_edges"], []any{https})

	// PATCH: omitted members keep their value; a module given replaces the whole module.
	got := c.ok(200, "PATCH", "/edges/tls/"+tlsID, map[string]any{"description": "x", "ip_restriction": map[string]any{"enabled": false, "ip_policy_ids": []string{f.policy}}})
	equal(t, "patched restriction", got["ip_restriction"], map[string]any{"enabled": false, "ip_policies": []any{c.ref("/ip_policies", f.policy)}})
	equal(t, "kept", got["mutual_tls"], tls["mutual_tls"])
	equal(t, "description", got["description"], "x")
	got = c.ok(200, "PATCH", "/edges/tls/"+tlsID, map[string]any{"hostports": []string{}})
	equal(t, "hostports cleared", got["hostports"], []any{})
	c.ok(201, "POST", "/edges/https", map[string]any{"hostports": []string{"tls.example.com:443"}}) // free again
}

func TestEdgeValidation(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "*.wild.example.com"})
	other := c.as(c.srv.NewAccount(t))
	o := newEdgeFixtures(t, other, "other.example.com")
	for _, tt := range []struct {
		path string
		body map[string]any
		code string
	}{
		{"https", map[string]any{"hostports": []string{"app.example.com"}}, "ERR_7104"},
		{"https", map[string]any{"hostports": []string{"app.example.com:0"}}, "ERR_7112"},
		{"https", map[string]any{"hostports": []string{"app.example.com:8443"}}, "ERR_7116"},
		{"https", map[string]any{"hostports": []string{"nope.example.com:443"}}, "ERR_7117"},
		{"https", map[string]any{"hostports": []string{"other.example.com:443"}}, "ERR_7118"},
		{"https", map[string]any{"hostports": []string{f.addr}}, "ERR_7121"},
		{"tls", map[string]any{"hostports": []string{f.addr}}, "ERR_7133"},
		{"https", map[string]any{"hostports": []string{"app.example.com:443", "APP.example.com:443"}}, "ERR_215"},
		{"tcp", map[string]any{"hostports": []string{"1.2.3.4:5"}}, "ERR_7113"},
		{"tcp", map[string]any{"hostports": []string{o.addr}}, "ERR_7114"},
		{"tcp", map[string]any{"hostports": []string{"app.example.com:443"}}, "ERR_7120"},
		{"tcp", map[string]any{"description": strings.Repeat("x", 256)}, "ERR_7073"},
		{"tcp", map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_7074"},
		{"tcp", map[string]any{"backend": map[string]any{"backend_id": "bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}}, "ERR_6501"},
		{"tcp", map[string]any{"backend": map[string]any{"backend_id": f.policy}}, "ERR_6526"},
		{"tcp", map[string]any{"backend": map[string]any{"backend_id": o.backend}}, "ERR_6501"},
		{"tcp", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{}}}, "ERR_7025"},
		{"tcp", map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{o.policy}}}, "ERR_7007"},
		{"tcp", map[string]any{"traffic_policy": map[string]any{"value": httpPolicy}}, "ERR_2248"},
		{"tcp", map[string]any{"traffic_policy": map[string]any{"value": "{"}}, "ERR_2236"},
		{"tcp", map[string]any{"traffic_policy": map[string]any{"value": `{"on_tcp_connect":[{"actions":[{"type":"teleport"}]}]}`}}, "ERR_2236"},
		{"tcp", map[string]any{"mutual_tls": map[string]any{}}, "ERR_214"},
		{"tls", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{o.ca}}}, "ERR_7072"},
		{"tls", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{f.ca}}, "tls_termination": map[string]any{"terminate_at": "upstream"}}, "ERR_7062"},
		{"tls", map[string]any{"tls_termination": map[string]any{"terminate_at": "upstream", "min_version": "1.2"}}, "ERR_7062"},
		{"tls", map[string]any{"tls_termination": map[string]any{"min_version": "1.4"}}, "ERR_219"},
		{"https", map[string]any{"tls_termination": map[string]any{"terminate_at": "edge"}}, "ERR_7109"},
		{"https", map[string]any{"backend": map[string]any{}}, "ERR_214"},
	} {
		c.fails(400, tt.code, "POST", "/edges/"+tt.path, tt.body)
	}
	for _, kind := range []string{"https", "tcp", "tls"} {
		equal(t, kind+": nothing stored", len(c.ok(200, "GET", "/edges/"+kind, nil)[kind+"_edges"].([]any)), 0)
	}
	// A name under a wildcard reservation; a hostport belongs to one edge.
	c.ok(201, "POST", "/edges/https", map[string]any{"hostports": []string{"a.wild.example.com:443"}})
	c.fails(400, "ERR_7122", "POST", "/edges/tls", map[string]any{"hostports": []string{"a.wild.example.com:443"}})
	tcp := str(c.ok(201, "POST", "/edges/tcp", map[string]any{"hostports": []string{f.addr}})["id"])
	c.fails(400, "ERR_7122", "POST", "/edges/tcp", map[string]any{"hostports": []string{f.addr}})
	// A module's error names its member as a path from the body that held it.
	param := func(body map[string]any) string { return str(body["details"].(map[string]any)["param"]) }
	equal(t, "param in a create", param(c.fails(400, "ERR_2248", "POST", "/edges/tcp", map[string]any{"traffic_policy": map[string]any{"value": httpPolicy}})), "traffic_policy.value")
	equal(t, "param in a PATCH", param(c.fails(400, "ERR_7025", "PATCH", "/edges/tcp/"+tcp, map[string]any{"ip_restriction": map[string]any{"ip_policy_ids": []string{}}})), "ip_restriction.ip_policy_ids")
	equal(t, "param in a PUT", param(c.fails(400, "ERR_2248", "PUT", "/edges/tcp/"+tcp+"/traffic_policy", map[string]any{"value": httpPolicy})), "value")
	// A module PUT that breaks a rule across modules changes nothing.
	tls := str(c.ok(201, "POST", "/edges/tls", map[string]any{"mutual_tls": map[string]any{"certificate_authority_ids": []string{f.ca}}})["id"])
	c.fails(400, "ERR_7062", "PUT", "/edges/tls/"+tls+"/tls_termination", map[string]any{"terminate_at": "upstream"})
	c.fails(404, "", "GET", "/edges/tls/"+tls+"/tls_termination", nil)
	// Another account sees none of it.
	equal(t, "other GET", other.req("GET", "/edges/tcp/"+tcp, nil).status, 404)
	equal(t, "other PUT module", other.req("PUT", "/edges/tcp/"+tcp+"/backend", map[string]any{"backend_id": o.backend}).status, 404)
	equal(t, "other DELETE", other.req("DELETE", "/edges/tcp/"+tcp, nil).status, 404)
	c.fails(400, "ERR_227", "GET", "/edges/tls/"+tcp, nil)
}

func TestEdgeModuleEndpoints(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")
	id := str(c.ok(201, "POST", "/edges/tcp", nil)["id"])
	path := "/edges/tcp/" + id + "/backend"
	c.fails(404, "", "GET", path, nil)
	c.fails(404, "", "DELETE", path, nil)
	want := map[string]any{"enabled": true, "backend": c.ref("/backends/static", f.backend)}
	equal(t, "PUT flat", c.ok(200, "PUT", path, map[string]any{"backend_id": f.backend}), want)
	equal(t, "GET", c.ok(200, "GET", path, nil), want)
	want["enabled"] = false
	equal(t, "PUT wrapped", c.ok(200, "PUT", path, map[string]any{"module": map[string]any{"enabled": false, "backend_id": f.backend}}), want)
	equal(t, "edge shows it", c.ok(200, "GET", "/edges/tcp/"+id, nil)["backend"], want)
	c.fails(400, "ERR_214", "PUT", path, map[string]any{"backend_id": f.backend, "extra": 1})
	c.fails(400, "ERR_215", "PUT", path, map[string]any{"module": "x"})
	c.fails(400, "ERR_6501", "PUT", path, map[string]any{"backend_id": "bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"})
	equal(t, "unchanged", c.ok(200, "GET", path, nil), want)
	c.ok(204, "DELETE", path, nil)
	c.fails(404, "", "GET", path, nil)
	equal(t, "edge without it", c.ok(200, "GET", "/edges/tcp/"+id, nil)["backend"], nil)
	// The backend is free again.
	c.ok(204, "DELETE", "/backends/static/"+f.backend, nil)

	tls := str(c.ok(201, "POST", "/edges/tls", nil)["id"])
	equal(t, "tls termination", c.ok(200, "PUT", "/edges/tls/"+tls+"/tls_termination", map[string]any{"terminate_at": "upstream"}),
		map[string]any{"enabled": true, "terminate_at": "upstream", "min_version": nil})
	c.fails(400, "ERR_7062", "PUT", "/edges/tls/"+tls+"/mutual_tls", map[string]any{"certificate_authority_ids": []string{f.ca}})
	https := str(c.ok(201, "POST", "/edges/https", nil)["id"])
	equal(t, "mutual tls", c.ok(200, "PUT", "/edges/https/"+https+"/mutual_tls", map[string]any{"certificate_authority_ids": []string{f.ca}}),
		map[string]any{"enabled": true, "certificate_authorities": []any{c.ref("/certificate_authorities", f.ca)}})
	equal(t, "no backend module on HTTPS edges", c.req("PUT", "/edges/https/"+https+"/backend", map[string]any{}).status, 404)
}

// TestEdgeReferencesInUse: what an edge uses cannot be deleted while it does.
func TestEdgeReferencesInUse(t *testing.T) {
	c := newTC(t)
	f := newEdgeFixtures(t, c, "app.example.com")
	tcp := str(c.ok(201, "POST", "/edges/tcp", map[string]any{
		"hostports": []string{f.addr}, "backend": map[string]any{"backend_id": f.backend},
		"ip_restriction": map[string]any{"ip_policy_ids": []string{f.policy}},
	})["id"])
	https := str(c.ok(201, "POST", "/edges/https", map[string]any{
		"hostports": []string{"app.example.com:443"}, "mutual_tls": map[string]any{"certificate_authority_ids": []string{f.ca}},
	})["id"])
	for path, code := range map[string]string{
		"/reserved_domains/" + f.domainID:  "ERR_446",
		"/reserved_addrs/" + f.addrID:      "ERR_215",
		"/backends/static/" + f.backend:    "ERR_6502",
		"/ip_policies/" + f.policy:         "ERR_1420",
		"/certificate_authorities/" + f.ca: "ERR_215",
	} {
		e := c.fails(400, code, "DELETE", path, nil)
		referrers := str(e["details"].(map[string]any)["referrers"])
		equal(t, path+" names the edge", referrers == tcp || referrers == https, true)
	}
	c.ok(204, "DELETE", "/edges/tcp/"+tcp, nil)
	c.ok(204, "DELETE", "/edges/https/"+https, nil)
	for _, path := range []string{"/reserved_domains/" + f.domainID, "/reserved_addrs/" + f.addrID, "/backends/static/" + f.backend, "/ip_policies/" + f.policy, "/certificate_authorities/" + f.ca} {
		c.ok(204, "DELETE", path, nil)
	}
}

// TestEdgeModuleRace races deleting a backend against putting it into an edge's backend
// module; afterwards the edge never points at a missing backend.
func TestEdgeModuleRace(t *testing.T) {
	c := newTC(t)
	edge := str(c.ok(201, "POST", "/edges/tcp", nil)["id"])
	for range 20 {
		backend := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a:80"})["id"])
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); c.req("DELETE", "/backends/static/"+backend, nil) }()
		go func() {
			defer wg.Done()
			c.req("PUT", "/edges/tcp/"+edge+"/backend", map[string]any{"backend_id": backend})
		}()
		wg.Wait()
		if m, _ := c.ok(200, "GET", "/edges/tcp/"+edge, nil)["backend"].(map[string]any); m != nil {
			ref := m["backend"].(map[string]any)
			equal(t, "backend of the edge", c.req("GET", "/backends/static/"+str(ref["id"]), nil).status, 200)
		}
	}
}

func samlMetadata(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../internal/rules/testdata/idp_metadata.xml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
