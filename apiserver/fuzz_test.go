package apiserver_test

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
)

// fuzzCreates are valid create bodies of the families, in an order where every reference
// ({ipp}: the IP policy, {ed}: the event destination, {bkd}: the static backend) already
// exists. They seed the fuzzer and give the PATCH and PUT routes an object to change.
var fuzzCreates = []struct{ path, body string }{
	{"/api_keys", `{"description":"fuzz"}`},
	{"/credentials", `{"acl":["bind:*.example.com"]}`},
	{"/ssh_credentials", `{"public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpXhjHcQ4TkUyP0xqD2uJj1Z3DBkL4lCXHyl1fJ9uZ8 me@host"}`},
	{"/ssh_certificate_authorities", `{"private_key_type":"ed25519"}`},
	{"/service_users", `{"name":"fuzz"}`},
	{"/bot_users", `{"name":"fuzz-bot"}`},
	{"/tls_certificates", `{"certificate_pem":"{leaf}","private_key_pem":"{key}"}`},
	{"/certificate_authorities", `{"ca_pem":"{ca}"}`},
	{"/reserved_domains", `{"domain":"fuzz.example.com"}`},
	{"/reserved_addrs", `{"region":"us"}`},
	{"/ip_policies", `{"description":"fuzz"}`},
	{"/ip_policy_rules", `{"ip_policy_id":"{ipp}","cidr":"10.0.0.0/8","action":"allow"}`},
	{"/ip_restrictions", `{"type":"dashboard","ip_policy_ids":["{ipp}"]}`},
	{"/backends/static", `{"address":"example.com:443","tls":{"enabled":true}}`},
	{"/backends/http_response", `{"body":"ok","headers":{"x-a":"1"},"status_code":200}`},
	{"/backends/tunnel_group", `{"labels":{"env":"prod"}}`},
	{"/backends/failover", `{"backends":["{bkd}"]}`},
	{"/backends/weighted", `{"backends":{"{bkd}":1}}`},
	{"/edges/https", `{"hostports":["fuzz.example.com:443"]}`},
	{"/edges/tcp", `{"description":"fuzz"}`},
	{"/edges/tls", `{"description":"fuzz"}`},
	{"/edges/https/{edge_id}/routes", `{"match_type":"path_prefix","match":"/"}`},
	{"/event_destinations", `{"format":"json","target":{"observability":{"api_key":"k","site":"datadoghq.com","service":"warren","tags":"env:prod"}}}`},
	{"/event_subscriptions", `{"destination_ids":["{ed}"],"sources":[{"type":"ip_policy_created.v0"}]}`},
	{"/orchestrator_operators", `{"description":"fuzz"}`},
}

// fuzzPEMs returns a CA certificate, a leaf certificate it signed and the leaf's key, in
// PEM escaped for a JSON string. Ed25519 signs deterministically: the seeds never change.
func fuzzPEMs(f testing.TB) (ca, leaf, key string) {
	caKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	leafKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fuzz CA"},
		NotBefore: testNotBefore, NotAfter: testNotAfter, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(nil, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		f.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafDER, err := x509.CreateCertificate(nil, &x509.Certificate{SerialNumber: big.NewInt(2), DNSNames: []string{"fuzz.example.com"},
		NotBefore: testNotBefore, NotAfter: testNotAfter}, caCert, leafKey.Public(), caKey)
	if err != nil {
		f.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		f.Fatal(err)
	}
	escape := func(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }
	return escape(pemText("CERTIFICATE", caDER, nil)), escape(pemText("CERTIFICATE", leafDER, nil)), escape(pemText("PRIVATE KEY", keyDER, nil))
}

// fuzzRoute is one route that takes a body, with its path filled in.
type fuzzRoute struct{ method, template, path string }

// fuzzServer starts a server, creates one object per family where it can and returns every
// POST, PATCH and PUT route of testdata/routes.txt but the admin ones, with the created IDs
// in its wildcards (a family whose create failed keeps an unknown ID: its routes must 404).
func fuzzServer(f *testing.F) (*apiservertest.Server, []fuzzRoute, map[string]string) {
	srv := apiservertest.Start(f, apiservertest.NoRateLimit)
	ca, leaf, key := fuzzPEMs(f)
	ids := map[string]string{}    // collection path → ID of the object created there
	bodies := map[string]string{} // collection path → its valid create body, references filled
	fill := func(s string) string {
		return strings.NewReplacer("{ipp}", ids["/ip_policies"], "{ed}", ids["/event_destinations"],
			"{bkd}", ids["/backends/static"], "{edge_id}", ids["/edges/https"],
			"{ca}", ca, "{leaf}", leaf, "{key}", key).Replace(s)
	}
	for _, c := range fuzzCreates {
		path, body := fill(c.path), fill(c.body)
		bodies[c.path] = body
		status, out := fuzzSend(f, srv, "POST", path, []byte(body))
		if id, _ := out["id"].(string); status == http.StatusCreated && id != "" {
			ids[c.path] = id
		} else {
			f.Logf("seed create %s: %d %v", c.path, status, out["msg"])
		}
	}
	file, err := os.Open("testdata/routes.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	var routes []fuzzRoute
	for sc := bufio.NewScanner(file); sc.Scan(); {
		method, path, _ := strings.Cut(sc.Text(), " ")
		// The edge's SAML service provider takes the IdP's forms, not the API's JSON.
		if method == "GET" || method == "DELETE" || strings.HasPrefix(path, "/_admin/") || strings.HasPrefix(path, "/saml/") {
			continue
		}
		// {id} is the object of the collection the path names; {edge_id} the HTTPS edge.
		collection, _, _ := strings.Cut(path, "/{id}")
		id := ids[collection]
		if id == "" {
			id = "x_0ujsswThIGTUYm2K8FjOOfXtY1K"
		}
		routes = append(routes, fuzzRoute{method, path, strings.ReplaceAll(fill(path), "{id}", id)})
	}
	return srv, routes, bodies
}

// fuzzSend sends body to the server as the bootstrap admin and returns the status and the
// decoded reply; a reply that is not a JSON object (or empty on 204) fails the test.
func fuzzSend(t testing.TB, srv *apiservertest.Server, method, path string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.APIKey)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	checkOpenAPI(t, req, resp.StatusCode, resp.Header, data)
	var out map[string]any
	if len(data) > 0 || resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s %q: %d, reply not a JSON object: %q", method, path, body, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, out
}

// FuzzBodies sends any body to every route that takes one (the route picked by the first
// argument): the answer is never a 5xx, and a 4xx is the API's JSON error with its code.
func FuzzBodies(f *testing.F) {
	srv, routes, bodies := fuzzServer(f)
	for i, r := range routes {
		if b, ok := bodies[r.template]; ok && r.method == "POST" {
			f.Add(uint8(i), []byte(b))
		}
		f.Add(uint8(i), []byte(`{"description":"`+strings.Repeat("d", 10)+`","metadata":1}`))
	}
	for _, b := range []string{``, `null`, `[]`, `{"a":1,"a":2}`, "{\"description\":\"\xff\"}", `{"enabled":"yes"}`,
		`{"acl":["bind:"]}`, `{"value":"on_tcp_connect: ["}`, `{"backends":{"x":-1}}`, `{"ip_policy_ids":[""]}`} {
		f.Add(uint8(len(routes)-1), []byte(b))
		f.Add(uint8(0), []byte(b))
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		status, out := fuzzSend(t, srv, r.method, r.path, body)
		if status >= 500 {
			t.Fatalf("%s %s %q: %d %v", r.method, r.path, body, status, out)
		}
		if status >= 400 {
			code, _ := out["error_code"].(string)
			if sc, _ := out["status_code"].(float64); !strings.HasPrefix(code, "ERR_") || int(sc) != status {
				t.Fatalf("%s %s %q: %d without the API's error body: %v", r.method, r.path, body, status, out)
			}
		}
	})
}
