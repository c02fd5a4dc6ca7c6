package apiserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// noDelivery keeps the deliveries pending, so tests see them as the changes left them.
func noDelivery(o *apiserver.Options) { o.Events.Workers = -1 }

// events returns the outbox's events, newest first.
func (c *tc) events() []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for _, e := range c.as(c.srv.AdminToken).ok(200, "GET", "/_admin/events?account_id="+c.srv.AccountID, nil)["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// lastEvent checks that exactly one event was written since a count of before, and returns it.
func (c *tc) lastEvent(before int, eventType string) map[string]any {
	c.t.Helper()
	evs := c.events()
	if len(evs) != before+1 {
		c.t.Fatalf("%d events written, want 1 (%s)", len(evs)-before, eventType)
	}
	equal(c.t, "event_type", evs[0]["event_type"], eventType)
	return evs[0]
}

func TestAuditEventPayload(t *testing.T) {
	c := newTC(t, noDelivery)
	userID, token := c.srv.NewUser(t, api.RoleAdmin)
	u := c.as(token)
	n := len(c.events())

	p := u.ok(201, "POST", "/ip_policies", map[string]any{"description": "office"})
	ev := c.lastEvent(n, "ip_policy_created.v0")
	equal(t, "members", keysOf(ev), []string{"account_id", "event_id", "event_timestamp", "event_type", "object", "principal"})
	equal(t, "event_id prefix", strings.HasPrefix(str(ev["event_id"]), "ev_"), true)
	equal(t, "account_id", ev["account_id"], c.srv.AccountID)
	equal(t, "object is the response", ev["object"], p)
	principal := ev["principal"].(map[string]any)
	equal(t, "principal members", keysOf(principal), []string{"credential", "id", "source", "subject"})
	equal(t, "principal id", principal["id"], userID)
	equal(t, "principal source", principal["source"], "API")
	equal(t, "principal subject is the user's e-mail", strings.HasSuffix(str(principal["subject"]), "@example.com"), true)
	cred := principal["credential"].(map[string]any)
	equal(t, "credential is the API key used", strings.HasPrefix(str(cred["id"]), "ak_") && cred["uri"] == c.srv.URL+"/api_keys/"+str(cred["id"]), true)

	updated := u.ok(200, "PATCH", "/ip_policies/"+str(p["id"]), map[string]any{"description": "home"})
	equal(t, "updated object", c.lastEvent(n+1, "ip_policy_updated.v0")["object"], updated)
	u.ok(204, "DELETE", "/ip_policies/"+str(p["id"]), nil)
	equal(t, "deleted object", c.lastEvent(n+2, "ip_policy_deleted.v0")["object"], updated)
}

func TestAuditEventsOnlyForAcknowledgedChanges(t *testing.T) {
	c := newTC(t, noDelivery)
	policy := str(c.ok(201, "POST", "/ip_policies", map[string]any{})["id"])
	c.ok(201, "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{policy}})
	n := len(c.events())
	// Refused changes write no event.
	c.fails(400, "ERR_215", "POST", "/ip_policies", map[string]any{"description": strings.Repeat("x", 256)})
	c.fails(400, "ERR_1420", "DELETE", "/ip_policies/"+policy, nil)
	c.fails(404, "", "PATCH", "/ip_policies/ipp_0000000000000000000000000000", map[string]any{"description": "x"})
	// Families without event types (details.md §9.2) write none.
	c.ok(201, "POST", "/backends/static", map[string]any{"address": "example.com:443"})
	c.ok(201, "POST", "/service_users", map[string]any{"name": "ci"})
	equal(t, "events after refused and unaudited changes", len(c.events()), n)

	// A key's token is in the create response, never in its event.
	key := c.ok(201, "POST", "/api_keys", map[string]any{"description": "ci"})
	obj := c.lastEvent(n, "api_key_created.v0")["object"].(map[string]any)
	equal(t, "token absent", obj["token"], nil)
	equal(t, "same key", obj["id"], key["id"])
}

func TestAuditEventsForSubResources(t *testing.T) {
	c := newTC(t, noDelivery)
	d := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})
	n := len(c.events())
	equal(t, "destination event", c.events()[0]["event_type"], "event_destination_created.v0")
	equal(t, "secret redacted in the event", c.events()[0]["object"], d)
	sub := c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{d["id"]}})
	c.lastEvent(n, "event_subscription_created.v0")
	c.ok(201, "POST", "/event_subscriptions/"+str(sub["id"])+"/sources", map[string]any{"type": "ip_policy_deleted.v0"})
	obj := c.lastEvent(n+1, "event_subscription_updated.v0")["object"].(map[string]any)
	equal(t, "sources after the POST", len(obj["sources"].([]any)), 2)
	c.ok(204, "DELETE", "/event_subscriptions/"+str(sub["id"])+"/sources/ip_policy_created.v0", nil)
	obj = c.lastEvent(n+2, "event_subscription_updated.v0")["object"].(map[string]any)
	equal(t, "sources after the DELETE", obj["sources"], []any{map[string]any{"type": "ip_policy_deleted.v0", "uri": c.srv.URL + "/event_subscriptions/" + str(sub["id"]) + "/sources/ip_policy_deleted.v0"}})

	domain := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "shop.example.com"})
	c.ok(204, "DELETE", "/reserved_domains/"+str(domain["id"])+"/certificate_management_policy", nil)
	obj = c.lastEvent(n+4, "domain_updated.v0")["object"].(map[string]any)
	equal(t, "policy gone in the event", obj["certificate_management_policy"], nil)
}

func TestEventDeliveriesFanOut(t *testing.T) {
	c := newTC(t, noDelivery)
	admin := c.as(c.srv.AdminToken)
	dest := func() string {
		return str(c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})["id"])
	}
	a, b, unused := dest(), dest(), dest()
	source := func(types ...string) []any {
		var out []any
		for _, typ := range types {
			out = append(out, map[string]any{"type": typ})
		}
		return out
	}
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": source("ip_policy_created.v0", "ip_policy_deleted.v0"), "destination_ids": []any{a, b}})
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": source("ip_policy_created.v0"), "destination_ids": []any{b}})
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": source("api_key_created.v0"), "destination_ids": []any{unused}})

	c.ok(201, "POST", "/ip_policies", map[string]any{})
	ev := str(c.events()[0]["event_id"])
	ds := admin.ok(200, "GET", "/_admin/deliveries?event_id="+ev, nil)
	var got []string
	for _, d := range ds["deliveries"].([]any) {
		d := d.(map[string]any)
		equal(t, "delivery members", keysOf(d), []string{"account_id", "attempts", "created_at", "destination_id", "event_id", "id", "last_error", "next_attempt_at", "state", "updated_at"})
		equal(t, "pending", []any{d["state"], d["attempts"], d["last_error"], d["next_attempt_at"] != nil}, []any{"pending", 0.0, "", true})
		got = append(got, str(d["destination_id"]))
	}
	slices.Sort(got)
	want := []string{a, b}
	slices.Sort(want)
	equal(t, "one delivery per subscribed destination", got, want)

	// Operators page and narrow the lists.
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	page := admin.ok(200, "GET", "/_admin/deliveries?limit=1&destination_id="+b, nil)
	equal(t, "page size", len(page["deliveries"].([]any)), 1)
	next := str(page["next_page_uri"])
	if !strings.Contains(next, "destination_id="+b) || !strings.Contains(next, "before_id=evd_") {
		t.Fatalf("next_page_uri %q does not keep the filter", next)
	}
	equal(t, "no pending to unused", len(admin.ok(200, "GET", "/_admin/deliveries?destination_id="+unused, nil)["deliveries"].([]any)), 0)
	equal(t, "none failed", len(admin.ok(200, "GET", "/_admin/deliveries?state=failed", nil)["deliveries"].([]any)), 0)
	admin.fails(400, "ERR_215", "GET", "/_admin/deliveries?state=lost", nil)
	admin.fails(400, "ERR_231", "GET", "/_admin/events?destination_id="+a, nil)
	admin.fails(400, "ERR_227", "GET", "/_admin/events?before_id="+a, nil)
	c.fails(403, "ERR_203", "GET", "/_admin/events", nil)
}

// TestAuditedFamilies pins which families emit events: exactly those of details.md §9.2,
// with the event type stems of §9.1.
func TestAuditedFamilies(t *testing.T) {
	got := map[string]string{}
	for _, f := range api.Families {
		if f.Event != "" {
			got[f.Path] = f.Event
		}
	}
	equal(t, "audited families", got, map[string]string{
		"/api_keys": "api_key", "/credentials": "tunnel_credential", "/ssh_credentials": "ssh_public_key",
		"/ssh_certificate_authorities": "ssh_certificate_authority", "/reserved_domains": "domain",
		"/reserved_addrs": "tcp_address", "/tls_certificates": "tls_certificate",
		"/certificate_authorities": "certificate_authority", "/ip_policies": "ip_policy",
		"/ip_policy_rules": "ip_policy_rule", "/ip_restrictions": "ip_restriction",
		"/event_destinations": "event_destination", "/event_subscriptions": "event_subscription",
	})
}
