package apiserver_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

func TestAuthentication(t *testing.T) {
	c := newTC(t)
	cred := c.ok(201, "POST", "/credentials", map[string]any{})
	key := c.ok(201, "POST", "/api_keys", map[string]any{})
	body, _, _ := strings.Cut(str(key["token"]), "_")

	for _, tt := range []struct {
		name, header, code string
	}{
		{"missing", "", "ERR_200"},
		{"not bearer", "Token abc", "ERR_201"},
		{"basic", "Basic dXNlcjpwYXNz", "ERR_201"},
		{"bearer without token", "Bearer ", "ERR_201"},
		{"garbage", "Bearer notarealtoken", "ERR_202"},
		{"key id instead of token", "Bearer " + str(key["id"]), "ERR_208"},
		{"unknown token", "Bearer 2Ajx5GWqUPMFdbJPdrVk8pOL6Ue_000000000000000000000", "ERR_203"},
		{"wrong secret", "Bearer " + body + "_000000000000000000000", "ERR_203"},
		{"tunnel authtoken", "Bearer " + str(cred["token"]), "ERR_206"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(403, tt.code, "GET", "/api_keys", nil, "Authorization", tt.header)
		})
	}
	// A new key works at once; a deleted one stops at once.
	c.as(str(key["token"])).ok(200, "GET", "/api_keys", nil)
	c.ok(204, "DELETE", "/api_keys/"+str(key["id"]), nil)
	c.as(str(key["token"])).fails(403, "ERR_203", "GET", "/api_keys", nil)
}

func TestVersionHeader(t *testing.T) {
	c := newTC(t)
	c.fails(400, "ERR_218", "GET", "/api_keys", nil, "Service-Version", "")
	for _, v := range []string{"3", "abc", "1", "0"} {
		c.fails(400, "ERR_217", "GET", "/api_keys", nil, "Service-Version", v)
	}
}

func TestNotFoundBodies(t *testing.T) {
	c := newTC(t)
	r := c.req("GET", "/api_keys/ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", nil)
	equal(t, "status", r.status, 404)
	equal(t, "keys", keysOf(r.body), []string{"details", "msg", "status_code"})
	equal(t, "msg", r.body["msg"], "Resource not found")
	equal(t, "operation id", strings.HasPrefix(str(r.body["details"].(map[string]any)["operation_id"]), "op_"), true)

	for _, tt := range []struct{ method, path string }{
		{"GET", "/nope"},
		{"PUT", "/api_keys/ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}, // known path, wrong method
		{"POST", "/api_keys/ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"},
	} {
		r := c.req(tt.method, tt.path, nil)
		equal(t, tt.method+" "+tt.path, r.raw, `{"status_code":404,"msg":"Not Found","details":{"path":"`+tt.path+`"}}`)
	}
	c.fails(400, "ERR_227", "GET", "/api_keys/cr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", nil)
}

func TestRequestBodies(t *testing.T) {
	c := newTC(t)
	c.fails(400, "ERR_211", "GET", "/api_keys", `{}`)
	c.fails(400, "ERR_211", "DELETE", "/api_keys/ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", `{}`)
	c.fails(400, "ERR_210", "POST", "/api_keys", `{}`, "Content-Type", "text/plain")
	c.fails(400, "ERR_216", "POST", "/api_keys", `{}`, "Content-Type", "")
	c.fails(400, "ERR_213", "POST", "/api_keys", `{"description":`)
	c.fails(400, "ERR_213", "POST", "/api_keys", `[1]`)
	e := c.fails(400, "ERR_214", "POST", "/api_keys", map[string]any{"nope": 1})
	equal(t, "msg lists fields", strings.Contains(str(e["msg"]), "description, metadata, owner_id"), true)
	c.fails(400, "ERR_215", "POST", "/api_keys", map[string]any{"description": 5})
	c.fails(400, "ERR_212", "POST", "/api_keys", map[string]any{"description": strings.Repeat("x", 2<<20)})
	// An empty body with the JSON content type is an empty object.
	c.ok(201, "POST", "/api_keys", "")
}

func TestListQuery(t *testing.T) {
	c := newTC(t)
	c.fails(400, "ERR_230", "GET", "/api_keys?limit=%zz", nil)
	c.fails(400, "ERR_231", "GET", "/api_keys?page=2", nil)
	c.fails(400, "ERR_231", "GET", "/bot_users?filter=true", nil) // no filter on the deprecated path
	c.fails(400, "ERR_232", "GET", "/api_keys?limit=1&limit=2", nil)
	for _, l := range []string{"0", "101", "abc", "-1"} {
		c.fails(400, "ERR_233", "GET", "/api_keys?limit="+l, nil)
	}
	c.fails(400, "ERR_227", "GET", "/api_keys?before_id=cr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", nil)
	c.fails(400, "ERR_250", "GET", "/api_keys?filter=obj.nope+%3D%3D+1", nil)
	c.fails(400, "ERR_250", "GET", "/api_keys?filter=obj.description+%3D%3D", nil)
}

func TestPagingNewestFirst(t *testing.T) {
	c := newTC(t)
	var created []string
	for range 5 {
		created = append(created, str(c.ok(201, "POST", "/ssh_certificate_authorities", map[string]any{"description": "ca"})["id"]))
	}
	var seen []string
	next := "/ssh_certificate_authorities?limit=2"
	pages := 0
	for next != "" {
		page := c.ok(200, "GET", next, nil)
		pages++
		equal(t, "list uri", page["uri"], c.srv.URL+"/ssh_certificate_authorities")
		for _, item := range page["ssh_certificate_authorities"].([]any) {
			seen = append(seen, str(item.(map[string]any)["id"]))
		}
		next = str(page["next_page_uri"])
		if next != "" && !strings.HasPrefix(next, c.srv.URL+"/ssh_certificate_authorities?") {
			t.Fatalf("next_page_uri %q is not absolute", next)
		}
	}
	equal(t, "pages", pages, 3)
	for i, id := range seen {
		equal(t, "order", id, created[len(created)-1-i])
	}
	raw := c.req("GET", "/ssh_certificate_authorities?limit=1", nil).raw
	equal(t, "next_page_uri reads as a URL", strings.Contains(raw, `&limit=1"`), true)
	// A full last page has no next page (look-ahead).
	page := c.ok(200, "GET", "/ssh_certificate_authorities?limit=5", nil)
	equal(t, "next on full last page", page["next_page_uri"], nil)
	page = c.ok(200, "GET", "/ssh_certificate_authorities?before_id="+created[1], nil)
	equal(t, "before_id", len(page["ssh_certificate_authorities"].([]any)), 1)
}

func TestFilter(t *testing.T) {
	c := newTC(t)
	for _, d := range []string{"web", "db", "web"} {
		c.ok(201, "POST", "/credentials", map[string]any{"description": d, "acl": []string{"bind:" + d + ".example.com"}})
	}
	count := func(filter string) int {
		t.Helper()
		page := c.ok(200, "GET", "/credentials?filter="+urlEscape(filter), nil)
		return len(page["credentials"].([]any))
	}
	equal(t, "description", count(`obj.description == "web"`), 2)
	equal(t, "acl membership", count(`"bind:db.example.com" in obj.acl`), 1)
	equal(t, "created_at", count(`obj.created_at > timestamp(time.now).subtract("1d")`), 3)
	equal(t, "or", count(`obj.description == "web" || obj.description == "db"`), 3)
	// The next page keeps the filter.
	page := c.ok(200, "GET", "/credentials?limit=1&filter="+urlEscape(`obj.description == "web"`), nil)
	next := str(page["next_page_uri"])
	equal(t, "next keeps filter", strings.Contains(next, "filter="), true)
	page = c.ok(200, "GET", next, nil)
	equal(t, "second filtered page", len(page["credentials"].([]any)), 1)
	equal(t, "last filtered page", page["next_page_uri"], nil)
}

func TestHealthz(t *testing.T) {
	c := newTC(t)
	r := c.req("GET", "/healthz", nil, "Authorization", "", "Service-Version", "")
	equal(t, "healthz", r.status, http.StatusOK)
}

func TestAdminEndpointsNeedTheAdminToken(t *testing.T) {
	c := newTC(t)
	c.fails(403, "ERR_203", "POST", "/_admin/accounts", map[string]any{"name": "x"})
}

func TestCORSPreflight(t *testing.T) {
	c := newTC(t)
	r := c.req("OPTIONS", "/api_keys/ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", nil,
		"Origin", "https://console.example.com", "Access-Control-Request-Method", "PATCH",
		"Access-Control-Request-Headers", "authorization, service-version", "Authorization", "", "Service-Version", "")
	equal(t, "status", r.status, 204)
	equal(t, "origin", r.header.Get("Access-Control-Allow-Origin"), "https://console.example.com")
	equal(t, "methods", r.header.Get("Access-Control-Allow-Methods"), "GET, PATCH, DELETE")
	equal(t, "headers", r.header.Get("Access-Control-Allow-Headers"), "authorization, service-version")
	equal(t, "credentials", r.header.Get("Access-Control-Allow-Credentials"), "true")
	equal(t, "max age", r.header.Get("Access-Control-Max-Age"), "600")
	r = c.req("OPTIONS", "/api_keys", nil, "Origin", "https://x.example", "Access-Control-Request-Method", "POST")
	equal(t, "collection methods", r.header.Get("Access-Control-Allow-Methods"), "GET, POST")
	r = c.req("OPTIONS", "/nope", nil, "Origin", "https://x.example", "Access-Control-Request-Method", "GET")
	equal(t, "unknown path", r.status, 404)
	r = c.req("GET", "/api_keys", nil, "Origin", "https://x.example")
	equal(t, "simple request origin", r.header.Get("Access-Control-Allow-Origin"), "https://x.example")
}
