package apiserver_test

import (
	"strings"
	"sync"
	"testing"
)

func TestBackendShapes(t *testing.T) {
	c := newTC(t)
	tg := c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"env": "prod"}})
	equal(t, "tunnel group", keysOf(tg), []string{"created_at", "id", "labels", "tunnels", "uri"})
	equal(t, "tunnels", tg["tunnels"], []any{})
	st := c.ok(201, "POST", "/backends/static", map[string]any{"address": "10.0.0.5:8080", "tls": map[string]any{}})
	equal(t, "static", keysOf(st), []string{"address", "created_at", "id", "tls", "uri"})
	equal(t, "tls {} means disabled", st["tls"], map[string]any{"enabled": false})
	hr := c.ok(201, "POST", "/backends/http_response", map[string]any{"body": "gone", "status_code": 410, "headers": map[string]string{"Content-Type": "text/plain"}})
	equal(t, "http_response", keysOf(hr), []string{"body", "created_at", "headers", "id", "status_code", "uri"})
	equal(t, "header keys lowercased", hr["headers"], map[string]any{"content-type": "text/plain"})
	wd := c.ok(201, "POST", "/backends/weighted", map[string]any{"backends": map[string]int{str(tg["id"]): 90, str(st["id"]): 10}})
	equal(t, "weighted", keysOf(wd), []string{"backends", "created_at", "id", "uri"})
	fo := c.ok(201, "POST", "/backends/failover", map[string]any{"backends": []string{str(wd["id"]), str(hr["id"])}})
	equal(t, "failover", fo["backends"], []any{wd["id"], hr["id"]})
	for path, prefix := range map[string]string{"tunnel_group": "bkdtg_", "static": "bkdsc_", "http_response": "bkdhr_", "weighted": "bkdwd_", "failover": "bkdfo_"} {
		page := c.ok(200, "GET", "/backends/"+path, nil)
		items := page["backends"].([]any)
		equal(t, path+" list", len(items), 1)
		equal(t, path+" prefix", strings.HasPrefix(str(items[0].(map[string]any)["id"]), prefix), true)
		c.fails(400, "ERR_231", "GET", "/backends/"+path+"?filter=true", nil)
	}
	// Defaults and empties.
	empty := c.ok(201, "POST", "/backends/weighted", map[string]any{})
	equal(t, "weighted default", empty["backends"], map[string]any{})
	equal(t, "failover default", c.ok(201, "POST", "/backends/failover", map[string]any{})["backends"], []any{})
	equal(t, "status default", c.ok(201, "POST", "/backends/http_response", map[string]any{})["status_code"], float64(200))
	equal(t, "labels default", c.ok(201, "POST", "/backends/tunnel_group", map[string]any{})["labels"], map[string]any{})
}

func TestBackendValidation(t *testing.T) {
	c := newTC(t)
	st := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a.internal:80"})["id"])
	for _, tt := range []struct {
		path string
		body map[string]any
		code string
	}{
		{"static", map[string]any{}, "ERR_6505"},
		{"static", map[string]any{"address": "nohost"}, "ERR_6505"},
		{"static", map[string]any{"address": "h:99999"}, "ERR_6506"},
		{"static", map[string]any{"address": ":80"}, "ERR_6507"},
		{"http_response", map[string]any{"status_code": 700}, "ERR_6517"},
		{"http_response", map[string]any{"body": strings.Repeat("x", 65<<10)}, "ERR_6516"},
		{"http_response", map[string]any{"headers": map[string]string{"bad header": "x"}}, "ERR_215"},
		{"tunnel_group", map[string]any{"labels": map[string]string{"a=b": "c"}}, "ERR_6531"},
		{"tunnel_group", map[string]any{"labels": map[string]string{"a": ""}}, "ERR_6510"},
		{"weighted", map[string]any{"backends": map[string]int{st: 10001}}, "ERR_6512"},
		{"weighted", map[string]any{"backends": map[string]int{"bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue": 1}}, "ERR_6501"},
		{"weighted", map[string]any{"backends": map[string]int{"ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue": 1}}, "ERR_6526"},
		{"failover", map[string]any{"backends": []string{"bkdsc_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}}, "ERR_6501"},
		{"failover", map[string]any{"backends": []string{st, st}}, "ERR_215"},
	} {
		c.fails(400, tt.code, "POST", "/backends/"+tt.path, tt.body)
	}
	for _, path := range []string{"weighted", "failover", "http_response", "tunnel_group"} {
		equal(t, path+": nothing stored", len(c.ok(200, "GET", "/backends/"+path, nil)["backends"].([]any)), 0)
	}
}

func TestBackendPatch(t *testing.T) {
	c := newTC(t)
	a := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a:80"})["id"])
	b := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "b:80"})["id"])
	wd := c.ok(201, "POST", "/backends/weighted", map[string]any{"description": "split", "backends": map[string]int{a: 1, b: 0}})
	id := str(wd["id"])
	// Omitted keeps (no "omitted backends become empty" quirk), {} clears.
	got := c.ok(200, "PATCH", "/backends/weighted/"+id, map[string]any{"metadata": "m"})
	equal(t, "backends kept", got["backends"], map[string]any{a: float64(1), b: float64(0)})
	c.fails(400, "ERR_215", "PATCH", "/backends/weighted/"+id, map[string]any{"backends": map[string]int{id: 1}})
	got = c.ok(200, "PATCH", "/backends/weighted/"+id, map[string]any{"backends": map[string]int{}})
	equal(t, "backends cleared", got["backends"], map[string]any{})
	equal(t, "description kept", got["description"], "split")

	hr := str(c.ok(201, "POST", "/backends/http_response", map[string]any{"body": "x", "status_code": 503, "headers": map[string]string{"A": "1"}})["id"])
	got = c.ok(200, "PATCH", "/backends/http_response/"+hr, map[string]any{"description": "d"})
	equal(t, "body kept", got["body"], "x")
	equal(t, "status kept", got["status_code"], float64(503))
	equal(t, "headers kept", got["headers"], map[string]any{"a": "1"})
	c.fails(400, "ERR_6517", "PATCH", "/backends/http_response/"+hr, map[string]any{"status_code": 42})

	st := c.ok(200, "PATCH", "/backends/static/"+a, map[string]any{"tls": map[string]any{"enabled": true}})
	equal(t, "address kept", st["address"], "a:80")
	equal(t, "tls set", st["tls"], map[string]any{"enabled": true})

	tg := str(c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"env": "prod"}})["id"])
	got = c.ok(200, "PATCH", "/backends/tunnel_group/"+tg, map[string]any{"metadata": "m"})
	equal(t, "labels kept", got["labels"], map[string]any{"env": "prod"})
}

func TestBackendInUse(t *testing.T) {
	c := newTC(t)
	child := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a:80"})["id"])
	parent := str(c.ok(201, "POST", "/backends/failover", map[string]any{"backends": []string{child}})["id"])
	e := c.fails(400, "ERR_6502", "DELETE", "/backends/static/"+child, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], parent)
	c.ok(204, "DELETE", "/backends/failover/"+parent, nil)
	c.ok(204, "DELETE", "/backends/static/"+child, nil)

	other := c.as(c.srv.NewAccount(t))
	mine := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a:80"})["id"])
	equal(t, "other account GET", other.req("GET", "/backends/static/"+mine, nil).status, 404)
	equal(t, "other account DELETE", other.req("DELETE", "/backends/static/"+mine, nil).status, 404)
	other.fails(400, "ERR_6501", "POST", "/backends/weighted", map[string]any{"backends": map[string]int{mine: 1}})
	equal(t, "other list", len(other.ok(200, "GET", "/backends/static", nil)["backends"].([]any)), 0)
}

// TestBackendDeleteRace races deleting a backend against creating a weighted backend that
// references it; afterwards no weighted backend references a missing one.
func TestBackendDeleteRace(t *testing.T) {
	c := newTC(t)
	for range 20 {
		child := str(c.ok(201, "POST", "/backends/static", map[string]any{"address": "a:80"})["id"])
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); c.req("DELETE", "/backends/static/"+child, nil) }()
		go func() {
			defer wg.Done()
			c.req("POST", "/backends/weighted", map[string]any{"backends": map[string]int{child: 1}})
		}()
		wg.Wait()
	}
	for _, item := range c.ok(200, "GET", "/backends/weighted", nil)["backends"].([]any) {
		for child := range item.(map[string]any)["backends"].(map[string]any) {
			equal(t, "child of "+str(item.(map[string]any)["id"]), c.req("GET", "/backends/static/"+child, nil).status, 200)
		}
	}
}
