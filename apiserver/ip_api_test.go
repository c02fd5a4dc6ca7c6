package apiserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
)

// from makes the following requests of c come from addr (host:port).
func (c *tc) from(addr string) *tc {
	c.srv.SetRemoteAddr(addr)
	return c
}

// rule adds a rule to policy and returns its ID.
func (c *tc) rule(policy, cidr, action string) string {
	c.t.Helper()
	return str(c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": cidr, "ip_policy_id": policy, "action": action})["id"])
}

func TestAPIIPRestrictionEnforced(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	c := newTC(t, func(o *apiserver.Options) { o.Logger = zap.New(core) })
	c.from("198.51.100.7:5000")
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	allow := c.rule(policy, "198.51.100.0/24", "allow")
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{policy}})["id"])
	c.ok(200, "GET", "/ip_policies", nil)

	// Outside the restriction: 403 ERR_220 on reads and writes, and the write changes nothing.
	c.from("203.0.113.9:5000")
	e := c.fails(403, "ERR_220", "POST", "/ip_policies", map[string]any{"description": "x"})
	equal(t, "msg", e["msg"], "The IP address 203.0.113.9 is not allowed by the account's API IP restriction "+x+".")
	c.fails(403, "ERR_220", "GET", "/ip_policies", nil)
	// Another account has no restriction, and the operator endpoints are never restricted.
	c.as(c.srv.NewAccount(t)).ok(200, "GET", "/ip_policies", nil)
	c.srv.NewUser(t, "admin")
	c.from("198.51.100.7:5000")
	equal(t, "policies", c.count("/ip_policies", "ip_policies"), 1)

	// A deny rule wins over an allow rule that also contains the address.
	c.rule(policy, "198.51.100.8/32", "deny")
	c.from("198.51.100.8:1").fails(403, "ERR_220", "GET", "/ip_policies", nil)
	c.from("198.51.100.9:1").ok(200, "GET", "/ip_policies", nil)

	// Not enforced: a dry run, the request goes through and a warning names what it would do.
	c.ok(200, "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": false})
	c.from("198.51.100.8:1").ok(200, "GET", "/ip_policies", nil)
	warned := logs.FilterMessage("the API IP restriction is not enforced; it would block this request").All()
	if len(warned) != 1 || warned[0].Level != zapcore.WarnLevel {
		t.Fatalf("want one dry-run warning, got %v", logs.All())
	}
	fields := warned[0].ContextMap()
	equal(t, "warned restriction", fields["ip_restriction_id"], x)
	equal(t, "warned ip", fields["client_ip"], "198.51.100.8")
	equal(t, "warned account", fields["account_id"], c.srv.AccountID)
	// An allowed caller logs nothing.
	c.from("198.51.100.9:1").ok(200, "GET", "/ip_policies", nil)
	equal(t, "warnings", logs.FilterMessage("the API IP restriction is not enforced; it would block this request").Len(), 1)

	// Deleting the restriction lifts it.
	c.ok(200, "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": true})
	c.from("203.0.113.9:1").fails(403, "ERR_220", "GET", "/ip_policies", nil)
	c.from("198.51.100.7:1").ok(204, "DELETE", "/ip_restrictions/"+x, nil)
	c.from("203.0.113.9:1").ok(200, "GET", "/ip_policy_rules/"+allow, nil)
}

func TestAPIIPRestrictionLockOut(t *testing.T) {
	c := newTC(t)
	c.from("203.0.113.9:5000")
	office := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(office, "198.51.100.0/24", "allow")
	here := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(here, "203.0.113.0/24", "allow")

	// Creating an enforced api restriction that excludes the caller is refused.
	e := c.fails(400, "ERR_220", "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{office}})
	equal(t, "param", e["details"].(map[string]any)["param"], "enforced")
	equal(t, "restrictions", c.count("/ip_restrictions", "ip_restrictions"), 0)
	// Other types are not the API's: nothing to lock out.
	c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "enforced": true, "ip_policy_ids": []string{office}})

	// Staged with enforced false, then enforced: refused until the caller's address is in it.
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": []string{office}})["id"])
	e = c.fails(400, "ERR_220", "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": true})
	equal(t, "msg", e["msg"], "This change would lock you out: the enforced API IP restriction "+x+" would not allow your IP address 203.0.113.9. "+
		"Allow that address first, or stage the restriction with enforced: false and enforce it from an allowed address.")
	equal(t, "still staged", c.ok(200, "GET", "/ip_restrictions/"+x, nil)["enforced"], false)
	c.ok(200, "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": true, "ip_policy_ids": []string{office, here}})
	c.ok(200, "GET", "/ip_restrictions/"+x, nil)

	// Dropping the caller's policy from the enforced restriction is refused too.
	c.fails(400, "ERR_220", "PATCH", "/ip_restrictions/"+x, map[string]any{"ip_policy_ids": []string{office}})
	equal(t, "policies kept", len(c.ok(200, "GET", "/ip_restrictions/"+x, nil)["ip_policies"].([]any)), 2)

	// So are rule writes that would leave the caller outside: a deny rule, a changed CIDR,
	// a deleted allow rule. A rule of a policy the restriction does not use is free.
	hereRule := str(c.ok(200, "GET", "/ip_policy_rules?filter="+urlEscape(`obj.ip_policy == "`+here+`"`), nil)["ip_policy_rules"].([]any)[0].(map[string]any)["id"])
	c.fails(400, "ERR_220", "POST", "/ip_policy_rules", map[string]any{"cidr": "203.0.113.9/32", "ip_policy_id": office, "action": "deny"})
	c.fails(400, "ERR_220", "PATCH", "/ip_policy_rules/"+hereRule, map[string]any{"cidr": "192.0.2.0/24"})
	c.fails(400, "ERR_220", "DELETE", "/ip_policy_rules/"+hereRule, nil)
	equal(t, "rule kept", c.ok(200, "GET", "/ip_policy_rules/"+hereRule, nil)["cidr"], "203.0.113.0/24")
	equal(t, "rules", c.count("/ip_policy_rules", "ip_policy_rules"), 2)
	spare := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(spare, "203.0.113.9/32", "deny")
	// Another allow rule for the caller makes the first one free to go.
	c.rule(office, "203.0.113.9/32", "allow")
	c.ok(204, "DELETE", "/ip_policy_rules/"+hereRule, nil)

	// Unenforced, anything goes (and only warns).
	c.ok(200, "PATCH", "/ip_restrictions/"+x, map[string]any{"enforced": false, "ip_policy_ids": []string{office}})
	c.rule(office, "203.0.113.0/24", "deny")
	c.ok(200, "GET", "/ip_policies", nil)
}

func TestAPIIPRestrictionIPv6(t *testing.T) {
	c := newTC(t)
	c.from("[2001:db8::5]:443")
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(policy, "2001:db8::/32", "allow")
	c.rule(policy, "198.51.100.0/24", "allow")
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{policy}})["id"])

	e := c.from("[2001:db9::1]:443").fails(403, "ERR_220", "GET", "/ip_policies", nil)
	equal(t, "msg", e["msg"], "The IP address 2001:db9::1 is not allowed by the account's API IP restriction "+x+".")
	c.from("[fe80::1%eth0]:443").fails(403, "ERR_220", "GET", "/ip_policies", nil)
	// An IPv4-mapped IPv6 peer is its IPv4 address.
	c.from("[::ffff:198.51.100.7]:443").ok(200, "GET", "/ip_policies", nil)
	c.from("[2001:db8:ffff::1]:443").ok(200, "GET", "/ip_policies", nil)
}

func TestAPIIPRestrictionTrustedProxies(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	c.from("198.51.100.7:1")
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.rule(policy, "198.51.100.0/24", "allow")
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{policy}})["id"])

	for _, tt := range []struct {
		peer, xff string
		client    string // "" when allowed
	}{
		{"198.51.100.7:1", "203.0.113.9", ""},                              // not from a proxy: the header is ignored
		{"203.0.113.9:1", "198.51.100.7", "203.0.113.9"},                   // an untrusted peer cannot claim an address
		{"10.1.1.1:1", "198.51.100.7", ""},                                 // a trusted proxy names the client
		{"10.1.1.1:1", "198.51.100.7, 203.0.113.9", "203.0.113.9"},         // the rightmost untrusted entry, not one the client wrote
		{"10.1.1.1:1", "203.0.113.9, 198.51.100.7, 10.2.2.2", ""},          // trusted hops are skipped
		{"10.1.1.1:1", "", "10.1.1.1"},                                     // no header: the proxy itself
		{"10.1.1.1:1", "10.3.3.3", "10.3.3.3"},                             // every hop trusted: the leftmost
		{"10.1.1.1:1", "nonsense", "(unknown)"},                            // unreadable: allowed by no rule
		{"[::ffff:10.1.1.1]:1", "[2001:db8::1]:80, 198.51.100.7:4711", ""}, // ports and mapped addresses read
	} {
		c.from(tt.peer)
		r := c.req("GET", "/ip_policies", nil, "X-Forwarded-For", tt.xff)
		if tt.client == "" {
			equal(t, tt.peer+" "+tt.xff, r.status, 200)
			continue
		}
		equal(t, tt.peer+" "+tt.xff+" status", r.status, 403)
		equal(t, tt.peer+" "+tt.xff+" msg", r.body["msg"], "The IP address "+tt.client+" is not allowed by the account's API IP restriction "+x+".")
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := apiserver.ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,10.1.2.3/16,")
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "prefixes", got, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("10.1.0.0/16"),
	})
	none, err := apiserver.ParseTrustedProxies("")
	equal(t, "empty", len(none), 0)
	equal(t, "empty err", err, nil)
	for _, bad := range []string{"proxy.example.com", "10.0.0.0/33", "10.0.0.0/8;10.1.0.0/16"} {
		if _, err := apiserver.ParseTrustedProxies(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestTwoAuthorizationHeaders(t *testing.T) {
	c := newTC(t)
	for _, route := range []struct{ method, path, token string }{
		{"GET", "/ip_policies", c.token},
		{"POST", "/_admin/accounts", c.srv.AdminToken},
	} {
		req, err := http.NewRequest(route.method, c.srv.URL+route.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Both valid: which one a proxy or server would pick is exactly the ambiguity refused.
		req.Header.Add("Authorization", "Bearer "+route.token)
		req.Header.Add("Authorization", "Bearer "+route.token)
		req.Header.Set("Service-Version", "2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkOpenAPI(t, req, resp.StatusCode, resp.Header, data)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Fatal(err)
		}
		equal(t, route.path+" status", resp.StatusCode, 403)
		equal(t, route.path+" error_code", body["error_code"], "ERR_201")
		equal(t, route.path+" msg", body["msg"], "The request has 2 Authorization headers; send exactly one 'Authorization: Bearer <token>'.")
	}
}
