package apiserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
)

// Request bodies are decoded strictly: exact member names at every depth, no member twice,
// valid UTF-8 only, an object and nothing else. Nothing is stored on a refusal.
func TestStrictJSONBodies(t *testing.T) {
	c := newTC(t)
	for _, tt := range []struct {
		name, body, code, msg, param string
	}{
		{"member names match exactly", `{"address":"example.com:443","Address":"evil.com:1"}`, "ERR_214",
			`Unknown parameter "Address". Supported parameters: address, description, metadata, tls.`, "Address"},
		{"nested names match exactly", `{"address":"example.com:443","tls":{"Enabled":true}}`, "ERR_214",
			`Unknown parameter "tls.Enabled". Supported parameters: enabled.`, "tls.Enabled"},
		{"member given twice", `{"address":"example.com:443","address":"evil.com:1"}`, "ERR_213",
			`The member "address" is given more than once.`, "address"},
		{"nested member given twice", `{"address":"example.com:443","tls":{"enabled":false,"enabled":true}}`, "ERR_213",
			`The member "tls.enabled" is given more than once.`, "tls.enabled"},
		{"lone surrogate", `{"address":"example.com:443","description":"\ud800"}`, "ERR_213",
			"The request body is not valid JSON: invalid surrogate pair `\\ud800\"}` in string (at byte 44).", "description"},
		{"invalid UTF-8", "{\"address\":\"example.com:443\",\"description\":\"\xff\"}", "ERR_213",
			"The request body is not valid JSON: invalid UTF-8 (at byte 44).", "description"},
		{"invalid UTF-8 in a name", "{\"\xff\":1}", "ERR_213",
			"The request body is not valid JSON: invalid UTF-8 (at byte 2).", ""},
		{"null", `null`, "ERR_213", "The request body must be a JSON object, not null.", ""},
		{"array", `[{"address":"example.com:443"}]`, "ERR_213", "The request body must be a JSON object, not an array.", ""},
		{"string", `"example.com:443"`, "ERR_213", "The request body must be a JSON object, not a string.", ""},
		{"number", `1`, "ERR_213", "The request body must be a JSON object, not a number.", ""},
		{"boolean", `true`, "ERR_213", "The request body must be a JSON object, not a boolean.", ""},
		{"truncated", `{"address":`, "ERR_213", "The request body is not valid JSON: unexpected EOF (at byte 11).", "address"},
		{"trailing data", `{"address":"example.com:443"} {}`, "ERR_213",
			"The request body is not valid JSON: invalid character '{' after top-level value (at byte 30).", ""},
		{"wrong type", `{"address":443}`, "ERR_215", `Invalid value for parameter "address": expected a string.`, "address"},
		{"wrong nested type", `{"address":"example.com:443","tls":{"enabled":"yes"}}`, "ERR_215",
			`Invalid value for parameter "tls.enabled": expected a boolean.`, "tls.enabled"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := c.fails(400, tt.code, "POST", "/backends/static", tt.body)
			equal(t, "msg", e["msg"], tt.msg)
			equal(t, "details.param", str(e["details"].(map[string]any)["param"]), tt.param)
		})
	}
	equal(t, "nothing stored", c.count("/backends/static", "backends"), 0)

	// Maps are strict too, and report the key at fault.
	e := c.fails(400, "ERR_215", "POST", "/backends/http_response", `{"headers":{"x-a":1}}`)
	equal(t, "map value param", e["details"].(map[string]any)["param"], "headers.x-a")
	c.fails(400, "ERR_213", "POST", "/backends/http_response", `{"headers":{"x-a":"1","x-a":"2"}}`)

	// null still means "omitted", for pointers, slices, maps and nested objects alike.
	st := c.ok(201, "POST", "/backends/static", `{"address":"example.com:443","tls":null,"description":null,"metadata":null}`)
	equal(t, "tls defaults", st["tls"], map[string]any{"enabled": false})
	equal(t, "null nested member", c.ok(201, "POST", "/backends/static", `{"address":"example.com:443","tls":{"enabled":null}}`)["tls"], map[string]any{"enabled": false})
	equal(t, "null map", c.ok(201, "POST", "/backends/tunnel_group", `{"labels":null}`)["labels"], map[string]any{})
	id := str(st["id"])
	c.ok(200, "PATCH", "/backends/static/"+id, `{"description":"kept"}`)
	patched := c.ok(200, "PATCH", "/backends/static/"+id, `{"description":null,"address":null}`)
	equal(t, "null keeps description", patched["description"], "kept")
	equal(t, "null keeps address", patched["address"], "example.com:443")
	// An empty body is still {}.
	c.ok(201, "POST", "/ip_policies", "")
	// The admin endpoints decode the same way.
	adm := newTC(t, func(o *apiserver.Options) { o.AdminToken = "admin-secret" })
	adm.token = "admin-secret"
	adm.fails(400, "ERR_214", "POST", "/_admin/accounts", `{"name":"acme","Name":"evil"}`)
	adm.fails(400, "ERR_213", "POST", "/_admin/accounts", `{"name":"acme","name":"evil"}`)
	adm.fails(400, "ERR_213", "POST", "/_admin/accounts", `null`)
}

// Unclean paths get the API's JSON 404, never ServeMux's redirect.
func TestUncleanPaths(t *testing.T) {
	c := newTC(t)
	id := str(c.ok(201, "POST", "/api_keys", map[string]any{})["id"])
	for _, tt := range []struct{ method, path, detail string }{
		{"GET", "//api_keys", "//api_keys"},
		{"GET", "/api_keys/", "/api_keys/"},
		{"GET", "/api_keys//", "/api_keys//"},
		{"GET", "/api_keys//" + id, "/api_keys//" + id},
		{"GET", "/api_keys/" + id + "/", "/api_keys/" + id + "/"},
		{"GET", "/./api_keys", "/./api_keys"},
		{"GET", "/api_keys/./" + id, "/api_keys/./" + id},
		{"GET", "/x/../api_keys", "/x/../api_keys"},
		{"GET", "/api_keys/" + id + "/..", "/api_keys/" + id + "/.."},
		{"GET", "/x/%2e%2e/api_keys", "/x/../api_keys"},
		{"GET", "/x/%2E%2E/api_keys", "/x/../api_keys"},
		{"GET", "/%2e/api_keys", "/./api_keys"},
		{"GET", "/api_keys%2F", "/api_keys/"},
		{"GET", "//", "//"},
		{"PATCH", "/api_keys//" + id, "/api_keys//" + id},
		{"DELETE", "/api_keys/" + id + "/", "/api_keys/" + id + "/"},
		{"POST", "/api_keys/", "/api_keys/"},
		{"GET", "/healthz/", "/healthz/"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var body any
			if tt.method == "PATCH" || tt.method == "POST" {
				body = map[string]any{}
			}
			r := c.req(tt.method, tt.path, body)
			equal(t, "status", r.status, 404)
			equal(t, "Content-Type", r.header.Get("Content-Type"), "application/json")
			equal(t, "Location", r.header.Get("Location"), "")
			equal(t, "body", r.raw, fmt.Sprintf(`{"status_code":404,"msg":"Not Found","details":{"path":%q}}`, tt.detail))
		})
	}
	// The key was neither changed nor deleted, and clean paths still work.
	c.ok(200, "GET", "/api_keys/"+id, nil)
}

// Error messages and details repeat a caller's value only up to rules.MaxQuoted characters.
func TestErrorsQuoteBoundedInput(t *testing.T) {
	c := newTC(t)
	huge := strings.Repeat("a", 900<<10)
	const limit = 2 << 10 // bytes: any error body is far below this
	for _, tt := range []struct {
		name, method, path, code string
		body                     any
		hdr                      []string
	}{
		{"filter", "GET", "/api_keys?filter=" + huge, "ERR_250", nil, nil},
		{"filter of one long identifier", "GET", "/api_keys?filter=obj." + huge[:90<<10] + "+%3D%3D+1", "ERR_250", nil, nil},
		{"filter with a long string", "GET", "/api_keys?filter=obj.description+%3D%3D+%22" + huge[:90<<10], "ERR_250", nil, nil},
		{"filter field within the size limit", "GET", "/api_keys?filter=obj." + huge[:4000] + "+%3D%3D+1", "ERR_250", nil, nil},
		{"filter variable within the size limit", "GET", "/api_keys?filter=" + huge[:4000] + "+%3D%3D+1", "ERR_250", nil, nil},
		{"filter syntax within the size limit", "GET", "/api_keys?filter=obj.id+%3D%3D+%27" + huge[:4000], "ERR_250", nil, nil},
		{"filter function within the size limit", "GET", "/api_keys?filter=" + huge[:4000] + "(obj.id)", "ERR_250", nil, nil},
		{"filter of many errors", "GET", "/api_keys?filter=" + strings.Repeat("%3D%3D", 2000), "ERR_250", nil, nil},
		{"unknown query parameter", "GET", "/api_keys?" + huge + "=1", "ERR_231", nil, nil},
		{"limit", "GET", "/api_keys?limit=" + huge, "ERR_233", nil, nil},
		{"before_id", "GET", "/api_keys?before_id=" + huge, "ERR_227", nil, nil},
		{"ID in the path", "GET", "/api_keys/" + huge[:64<<10], "ERR_227", nil, nil},
		{"unknown member", "POST", "/api_keys", "ERR_214", map[string]any{huge: 1}, nil},
		{"duplicate member", "POST", "/api_keys", "ERR_213", `{"` + huge[:400<<10] + `":1,"` + huge[:400<<10] + `":1}`, nil},
		{"wrong type under a long name", "POST", "/backends/http_response", "ERR_215", map[string]any{"headers": map[string]any{huge: 1}}, nil},
		{"domain", "POST", "/reserved_domains", "ERR_514", map[string]any{"domain": huge}, nil},
		{"static address", "POST", "/backends/static", "ERR_6505", map[string]any{"address": huge}, nil},
		{"ACL rule", "POST", "/credentials", "ERR_600", map[string]any{"acl": []string{huge}}, nil},
		{"owner", "POST", "/api_keys", "ERR_634", map[string]any{"owner_id": huge}, nil},
		{"backend ID", "POST", "/backends/failover", "ERR_6526", map[string]any{"backends": []string{huge}}, nil},
		{"CIDR", "POST", "/ip_policy_rules", "ERR_1406", map[string]any{"cidr": huge, "action": "allow", "ip_policy_id": "ipp_x"}, nil},
		{"region", "POST", "/reserved_addrs", "ERR_500", map[string]any{"region": huge}, nil},
		{"label", "POST", "/backends/tunnel_group", "ERR_6509", map[string]any{"labels": map[string]string{huge: "v"}}, nil},
		{"Content-Type", "POST", "/api_keys", "ERR_210", map[string]any{}, []string{"Content-Type", "text/" + huge[:60<<10]}},
		{"Service-Version", "GET", "/api_keys", "ERR_217", nil, []string{"Service-Version", huge[:60<<10]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.req(tt.method, tt.path, tt.body, tt.hdr...)
			if r.status != 400 || str(r.body["error_code"]) != tt.code {
				t.Fatalf("got %d %v, want 400 %s: %.300s", r.status, r.body["error_code"], tt.code, r.raw)
			}
			if len(r.raw) > limit {
				t.Fatalf("error body is %d bytes: %.300s…", len(r.raw), r.raw)
			}
			if !strings.Contains(r.raw, "…") {
				t.Fatalf("the value is not quoted clipped: %s", r.raw)
			}
		})
	}
	// An unknown path is echoed clipped too.
	r := c.req("GET", "/"+huge[:60<<10], nil)
	equal(t, "unknown path", r.raw, `{"status_code":404,"msg":"Not Found","details":{"path":"/`+strings.Repeat("a", 99)+`…"}}`)
}

// Identifiers refuse every control character; free text keeps tab and newlines.
func TestControlCharacters(t *testing.T) {
	c := newTC(t)
	for _, tt := range []struct {
		name, path, code, param string
		body                    map[string]any
	}{
		{"service user name", "/service_users", "ERR_215", "name", map[string]any{"name": "ci\x00bot"}},
		{"service user name with a newline", "/service_users", "ERR_215", "name", map[string]any{"name": "ci\nbot"}},
		{"domain", "/reserved_domains", "ERR_406", "domain", map[string]any{"domain": "app\x07.example.com"}},
		{"static address", "/backends/static", "ERR_6505", "address", map[string]any{"address": "example.com\x00:443"}},
		{"label", "/backends/tunnel_group", "ERR_215", "labels", map[string]any{"labels": map[string]string{"env": "prod\x1b[2J"}}},
		{"header", "/backends/http_response", "ERR_215", "headers", map[string]any{"headers": map[string]string{"x-a": "b\r\nx-evil: 1"}}},
		{"ACL", "/credentials", "ERR_600", "acl", map[string]any{"acl": []string{"bind:env=pr\x00od"}}},
		{"description", "/credentials", "ERR_604", "description", map[string]any{"description": "nul\x00"}},
		{"metadata", "/ip_policies", "ERR_100", "metadata", map[string]any{"metadata": "esc\x1b"}},
		{"C1 control", "/ip_policies", "ERR_215", "description", map[string]any{"description": "csi\u009b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := c.fails(400, tt.code, "POST", tt.path, tt.body)
			equal(t, "param", e["details"].(map[string]any)["param"], tt.param)
		})
	}
	e := c.fails(400, "ERR_215", "POST", "/service_users", map[string]any{"name": "ci\x00bot"})
	equal(t, "msg", e["msg"], `The value "ci\x00bot" of name contains the control character U+0000 at byte 2; control characters are not allowed here.`)
	equal(t, "nothing stored", c.count("/service_users", "service_users"), 0)

	// Free text may hold tab, newline and carriage return.
	p := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "line one\r\nline\ttwo", "metadata": "{\n\t\"a\": 1\n}"})
	equal(t, "description kept", p["description"], "line one\r\nline\ttwo")
	// Surrounding whitespace of a domain is still normalised away.
	equal(t, "domain trimmed", c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com\n"})["domain"], "app.example.com")
}
