package apiserver_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

var reservedAddrMembers = []string{"addr", "created_at", "description", "id", "metadata", "region", "uri"}

func TestReservedAddrs(t *testing.T) {
	c := newTC(t)
	r := c.req("POST", "/reserved_addrs", map[string]any{"description": "d", "metadata": "m"})
	equal(t, "status", r.status, 201)
	a := r.body
	id := str(a["id"])
	if !ids.Valid(id, "ra_") {
		t.Fatalf("id %q", id)
	}
	equal(t, "members", keysOf(a), reservedAddrMembers)
	equal(t, "uri", a["uri"], c.srv.URL+"/reserved_addrs/"+id)
	equal(t, "default region", a["region"], "us")
	m := regexp.MustCompile(`^tcp\.warren\.localhost:(\d+)$`).FindStringSubmatch(str(a["addr"]))
	if m == nil {
		t.Fatalf("addr %q", a["addr"])
	}
	if port, _ := strconv.Atoi(m[1]); port < apiserver.DefaultAddrMinPort || port > apiserver.DefaultAddrMaxPort {
		t.Fatalf("port %d outside the pool", port)
	}
	equal(t, "GET", c.ok(200, "GET", "/reserved_addrs/"+id, nil), a)

	// region: given, empty (the default), bare create.
	eu := c.ok(201, "POST", "/reserved_addrs", map[string]any{"region": "eu"})
	equal(t, "region", eu["region"], "eu")
	empty := c.ok(201, "POST", "/reserved_addrs", map[string]any{"region": ""})
	equal(t, "empty region", empty["region"], "us")
	bare := c.ok(201, "POST", "/reserved_addrs", nil)
	equal(t, "bare members", keysOf(bare), without(reservedAddrMembers, "description", "metadata"))
	if bare["addr"] == a["addr"] || bare["addr"] == eu["addr"] {
		t.Fatal("an address was handed out twice")
	}

	// Rejections store nothing.
	stored := c.count("/reserved_addrs", "reserved_addrs")
	for _, tt := range []struct {
		code string
		body map[string]any
	}{
		{"ERR_500", map[string]any{"region": "mars"}},
		{"ERR_500", map[string]any{"region": "global"}},
		{"ERR_504", map[string]any{"description": strings.Repeat("d", 256)}},
		{"ERR_100", map[string]any{"metadata": strings.Repeat("m", 4097)}},
		{"ERR_214", map[string]any{"addr": "tcp.warren.localhost:1"}},
		{"ERR_215", map[string]any{"region": 1}},
	} {
		c.fails(400, tt.code, "POST", "/reserved_addrs", tt.body)
	}
	equal(t, "nothing stored", c.count("/reserved_addrs", "reserved_addrs"), stored)

	// PATCH: D/M only; an empty update is ERR_506.
	path := "/reserved_addrs/" + id
	for _, body := range []any{nil, map[string]any{}, map[string]any{"id": id}, map[string]any{"description": nil}} {
		c.fails(400, "ERR_506", "PATCH", path, body)
	}
	for _, member := range []string{"region", "addr"} {
		c.fails(400, "ERR_214", "PATCH", path, map[string]any{member: "eu"})
	}
	c.fails(400, "ERR_504", "PATCH", path, map[string]any{"description": strings.Repeat("d", 256)})
	c.fails(400, "ERR_100", "PATCH", path, map[string]any{"metadata": strings.Repeat("m", 4097)})
	equal(t, "unchanged", c.ok(200, "GET", path, nil), a)
	got := c.ok(200, "PATCH", path, map[string]any{"metadata": "m2"})
	equal(t, "description kept", got["description"], "d")
	equal(t, "addr kept", got["addr"], a["addr"])
	equal(t, "region kept", got["region"], "us")
	got = c.ok(200, "PATCH", path, map[string]any{"description": ""})
	equal(t, "cleared", keysOf(got), without(reservedAddrMembers, "description"))

	// Filters.
	for filter, want := range map[string][]any{
		`obj.addr == "` + str(eu["addr"]) + `"`:              {eu["id"]},
		`obj.addr.startsWith("tcp.warren.localhost:")`:       {bare["id"], empty["id"], eu["id"], a["id"]},
		`obj.region == "eu"`:                                 {eu["id"]},
		`obj.region in ["eu", "jp"] || obj.metadata == "m2"`: {eu["id"], a["id"]},
		`obj.description == "" && obj.region == "us"`:        {bare["id"], empty["id"], a["id"]},
		`obj.id == "` + id + `"`:                             {id},
	} {
		var got []any
		for _, item := range c.ok(200, "GET", "/reserved_addrs?filter="+urlEscape(filter), nil)["reserved_addrs"].([]any) {
			got = append(got, item.(map[string]any)["id"])
		}
		equal(t, filter, got, want)
	}
	c.fails(400, "ERR_250", "GET", "/reserved_addrs?filter="+urlEscape(`obj.domain == "x"`), nil)

	// Something that refers to an address (a TCP edge, later) keeps it.
	edge := ids.New("edgtcp_")
	ctx := context.Background()
	if err := c.srv.Store.Write(ctx, func(tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: "tcp_edge", ID: edge, AccountID: c.srv.AccountID, Doc: []byte(`{}`), Refs: []string{id}})
	}); err != nil {
		t.Fatal(err)
	}
	e := c.fails(400, "ERR_215", "DELETE", path, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], edge)
	if !strings.Contains(str(e["msg"]), str(a["addr"])) {
		t.Fatalf("the message does not name the address: %v", e["msg"])
	}
	if err := c.srv.Store.Write(ctx, func(tx store.Tx) error { return tx.Delete(ctx, "tcp_edge", edge) }); err != nil {
		t.Fatal(err)
	}
	r = c.req("DELETE", path, nil)
	equal(t, "delete", r.status, 204)
	equal(t, "no body", r.raw, "")
	equal(t, "gone", c.req("GET", path, nil).status, 404)
	c.fails(400, "ERR_227", "GET", "/reserved_addrs/rd_x", nil)
}

// TestReservedAddrPool hands out a three-port pool shared by two accounts.
func TestReservedAddrPool(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) {
		o.AddrPool = apiserver.AddrPool{Host: "2001:db8::1", MinPort: 20000, MaxPort: 20002}
	})
	other := c.as(c.srv.NewAccount(t))
	var addrs []string
	var first string
	for i, client := range []*tc{c, other, c} {
		a := client.ok(201, "POST", "/reserved_addrs", nil)
		addrs = append(addrs, str(a["addr"]))
		if i == 0 {
			first = str(a["id"])
		}
	}
	slices.Sort(addrs)
	equal(t, "the whole pool", addrs, []string{"[2001:db8::1]:20000", "[2001:db8::1]:20001", "[2001:db8::1]:20002"})
	c.fails(400, "ERR_503", "POST", "/reserved_addrs", nil)
	other.fails(400, "ERR_503", "POST", "/reserved_addrs", nil)
	equal(t, "nothing stored", c.count("/reserved_addrs", "reserved_addrs"), 2)

	// A deleted address goes back to the pool.
	freed := str(c.ok(200, "GET", "/reserved_addrs/"+first, nil)["addr"])
	c.ok(204, "DELETE", "/reserved_addrs/"+first, nil)
	equal(t, "reused", str(other.ok(201, "POST", "/reserved_addrs", nil)["addr"]), freed)
}

func TestReservedAddrIsolation(t *testing.T) { onEachDatabase(t, testReservedAddrIsolation) }

func testReservedAddrIsolation(t *testing.T, c *tc) {
	other := c.as(c.srv.NewAccount(t))
	a := c.ok(201, "POST", "/reserved_addrs", map[string]any{"description": "mine"})
	path := "/reserved_addrs/" + str(a["id"])
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		var body any
		if method == "PATCH" {
			body = map[string]any{"description": "stolen"}
		}
		r := other.req(method, path, body)
		equal(t, method+" from another account", r.status, 404)
		equal(t, "no error code", r.body["error_code"], nil)
	}
	equal(t, "listed to another account", other.count("/reserved_addrs", "reserved_addrs"), 0)
	equal(t, "unchanged", c.ok(200, "GET", path, nil), a)
}
