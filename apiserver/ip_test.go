package apiserver_test

import (
	"strings"
	"sync"
	"testing"
)

func TestIPPolicies(t *testing.T) {
	c := newTC(t)
	p := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "office"})
	equal(t, "members", keysOf(p), []string{"created_at", "description", "id", "uri"})
	id := str(p["id"])
	equal(t, "prefix", strings.HasPrefix(id, "ipp_"), true)
	c.fails(400, "ERR_1400", "PATCH", "/ip_policies/"+id, map[string]any{})
	got := c.ok(200, "PATCH", "/ip_policies/"+id, map[string]any{"metadata": "m"})
	equal(t, "description kept", got["description"], "office")
	c.fails(400, "ERR_215", "POST", "/ip_policies", map[string]any{"description": strings.Repeat("x", 256)})
	list := c.ok(200, "GET", "/ip_policies?filter="+urlEscape(`obj.description == "office"`), nil)
	equal(t, "filtered", len(list["ip_policies"].([]any)), 1)
}

func TestIPPolicyRules(t *testing.T) {
	c := newTC(t)
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	other := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	rule := c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": policy, "action": "allow", "description": "vpn"})
	equal(t, "members", keysOf(rule), []string{"action", "cidr", "created_at", "description", "id", "ip_policy", "uri"})
	equal(t, "ip_policy ref", rule["ip_policy"], map[string]any{"id": policy, "uri": c.srv.URL + "/ip_policies/" + policy})
	id := str(rule["id"])

	v6 := c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "2001:DB8::/32", "ip_policy_id": policy, "action": "deny"})
	equal(t, "v6 lowercased", v6["cidr"], "2001:db8::/32")
	// The same CIDR is fine in another policy, not twice in one.
	c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": other, "action": "allow"})
	for _, tt := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": policy, "action": "deny"}, "ERR_1408"},
		{map[string]any{"ip_policy_id": policy, "action": "allow"}, "ERR_1405"},
		{map[string]any{"cidr": "10.0.0.0/8", "action": "allow"}, "ERR_1405"},
		{map[string]any{"cidr": "11.0.0.0/8", "ip_policy_id": policy}, "ERR_1405"},
		{map[string]any{"cidr": "nope", "ip_policy_id": policy, "action": "allow"}, "ERR_1406"},
		{map[string]any{"cidr": "10.1.1.1", "ip_policy_id": policy, "action": "allow"}, "ERR_1413"},
		{map[string]any{"cidr": "10.1.1.1/8", "ip_policy_id": policy, "action": "allow"}, "ERR_1409"},
		{map[string]any{"cidr": "12.0.0.0/8", "ip_policy_id": policy, "action": "block"}, "ERR_1422"},
		{map[string]any{"cidr": "12.0.0.0/8", "ip_policy_id": "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", "action": "allow"}, "ERR_1414"},
		{map[string]any{"cidr": "12.0.0.0/8", "ip_policy_id": "ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", "action": "allow"}, "ERR_1414"},
		{map[string]any{"cidr": "12.0.0.0/8", "ip_policy_id": policy, "action": "allow", "description": strings.Repeat("x", 256)}, "ERR_1421"},
	} {
		c.fails(400, tt.code, "POST", "/ip_policy_rules", tt.body)
	}
	e := c.fails(400, "ERR_1409", "PATCH", "/ip_policy_rules/"+id, map[string]any{"cidr": "10.9.0.0/8"})
	equal(t, "suggests the fix", strings.Contains(str(e["msg"]), "use 10.0.0.0/8"), true)
	c.fails(400, "ERR_1401", "PATCH", "/ip_policy_rules/"+id, map[string]any{})
	c.fails(400, "ERR_214", "PATCH", "/ip_policy_rules/"+id, map[string]any{"action": "deny"})
	got := c.ok(200, "PATCH", "/ip_policy_rules/"+id, map[string]any{"cidr": "10.8.0.0/16"})
	equal(t, "cidr updated", got["cidr"], "10.8.0.0/16")
	equal(t, "description kept", got["description"], "vpn")

	count := func(filter string) int {
		return len(c.ok(200, "GET", "/ip_policy_rules?filter="+urlEscape(filter), nil)["ip_policy_rules"].([]any))
	}
	equal(t, "by policy", count(`obj.ip_policy == "`+policy+`"`), 2)
	equal(t, "by action", count(`obj.action == "deny"`), 1)
	equal(t, "by cidr", count(`obj.cidr == "10.8.0.0/16"`), 1)
	equal(t, "stored rules", count(`obj.action == "allow" || obj.action == "deny"`), 3)
}

func TestIPRestrictions(t *testing.T) {
	c := newTC(t)
	p1 := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	p2 := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": p1, "action": "allow"})
	// The enforcement of type api is TestAPIIPRestriction*'s; here the generic CRUD.
	x := c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{p1, p2}})
	equal(t, "members", keysOf(x), []string{"created_at", "enforced", "id", "ip_policies", "type", "uri"})
	equal(t, "enforced default", x["enforced"], false)
	equal(t, "policies", len(x["ip_policies"].([]any)), 2)
	id := str(x["id"])

	c.fails(400, "ERR_1802", "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{p1}})
	c.fails(400, "ERR_1405", "POST", "/ip_restrictions", map[string]any{"ip_policy_ids": []string{p1}})
	c.fails(400, "ERR_215", "POST", "/ip_restrictions", map[string]any{"type": "ssh", "ip_policy_ids": []string{p1}})
	c.fails(400, "ERR_1405", "POST", "/ip_restrictions", map[string]any{"type": "agent"})
	c.fails(400, "ERR_1405", "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{}})
	c.fails(400, "ERR_1414", "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{"ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}})
	c.fails(400, "ERR_215", "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{p1, p1}})
	c.fails(400, "ERR_214", "PATCH", "/ip_restrictions/"+id, map[string]any{"type": "agent"})

	// A policy in use by a restriction cannot be deleted, and nothing of it goes.
	e := c.fails(400, "ERR_1420", "DELETE", "/ip_policies/"+p1, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], id)
	equal(t, "rules kept", len(c.ok(200, "GET", "/ip_policy_rules", nil)["ip_policy_rules"].([]any)), 1)

	got := c.ok(200, "PATCH", "/ip_restrictions/"+id, map[string]any{"enforced": true, "ip_policy_ids": []string{p2}})
	equal(t, "enforced", got["enforced"], true)
	equal(t, "policies replaced", got["ip_policies"], []any{map[string]any{"id": p2, "uri": c.srv.URL + "/ip_policies/" + p2}})
	// Now p1 is free: deleting it deletes its rules too.
	c.ok(204, "DELETE", "/ip_policies/"+p1, nil)
	equal(t, "rules deleted with their policy", len(c.ok(200, "GET", "/ip_policy_rules", nil)["ip_policy_rules"].([]any)), 0)
	c.ok(204, "DELETE", "/ip_restrictions/"+id, nil)
	c.ok(204, "DELETE", "/ip_policies/"+p2, nil)
}

func TestIPIsolation(t *testing.T) { onEachDatabase(t, testIPIsolation) }

func testIPIsolation(t *testing.T, c *tc) {
	other := c.as(c.srv.NewAccount(t))
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	rule := str(c.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": policy, "action": "allow"})["id"])
	x := str(c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{policy}})["id"])
	for _, path := range []string{"/ip_policies/" + policy, "/ip_policy_rules/" + rule, "/ip_restrictions/" + x} {
		equal(t, "GET "+path, other.req("GET", path, nil).status, 404)
		equal(t, "DELETE "+path, other.req("DELETE", path, nil).status, 404)
	}
	// Another account cannot reference my policy either.
	other.fails(400, "ERR_1414", "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": policy, "action": "allow"})
	other.fails(400, "ERR_1414", "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": []string{policy}})
	equal(t, "other lists", len(other.ok(200, "GET", "/ip_policies", nil)["ip_policies"].([]any)), 0)
}

// TestIPPolicyDeleteRace races deleting policies against creating restrictions and rules that
// reference them: whatever wins, no restriction or rule is left pointing at a missing policy.
func TestIPPolicyDeleteRace(t *testing.T) {
	c := newTC(t)
	const rounds = 15
	types := []string{"dashboard", "api", "agent", "endpoints"}
	for round := range rounds {
		policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); c.req("DELETE", "/ip_policies/"+policy, nil) }()
		go func() {
			defer wg.Done()
			c.req("POST", "/ip_restrictions", map[string]any{"type": types[round%len(types)], "ip_policy_ids": []string{policy}})
		}()
		go func() {
			defer wg.Done()
			c.req("POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "ip_policy_id": policy, "action": "allow"})
		}()
		wg.Wait()
		// Clean up restrictions so the next round can use the type again.
		for _, item := range c.ok(200, "GET", "/ip_restrictions", nil)["ip_restrictions"].([]any) {
			for _, p := range item.(map[string]any)["ip_policies"].([]any) {
				pid := str(p.(map[string]any)["id"])
				equal(t, "restriction's policy exists", c.req("GET", "/ip_policies/"+pid, nil).status, 200)
			}
			c.ok(204, "DELETE", "/ip_restrictions/"+str(item.(map[string]any)["id"]), nil)
		}
		for _, item := range c.ok(200, "GET", "/ip_policy_rules", nil)["ip_policy_rules"].([]any) {
			pid := str(item.(map[string]any)["ip_policy"].(map[string]any)["id"])
			equal(t, "rule's policy exists", c.req("GET", "/ip_policies/"+pid, nil).status, 200)
		}
	}
}
