package apiserver_test

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// newAccount creates an account through the operator endpoint and returns its ID and a
// client acting as its admin.
func newAccount(c *tc, name string) (string, *tc) {
	c.t.Helper()
	grant := c.as(c.srv.AdminToken).ok(201, "POST", "/_admin/accounts", map[string]any{"name": name, "admin_email": "admin@" + name + ".example"})
	return str(grant["account"].(map[string]any)["id"]), c.as(str(grant["api_key"].(map[string]any)["token"]))
}

func TestAdminListsAccountsAndUsers(t *testing.T) {
	c := newTC(t)
	adm := c.as(c.srv.AdminToken)
	first, _ := newAccount(c, "first")
	second, _ := newAccount(c, "second")
	adm.ok(201, "POST", "/_admin/accounts/"+second+"/users", map[string]any{"email": "member@second.example", "role": "member"})

	page := adm.ok(200, "GET", "/_admin/accounts?limit=2", nil)
	accounts := page["accounts"].([]any)
	equal(t, "first page, newest first", []any{accounts[0].(map[string]any)["id"], accounts[1].(map[string]any)["id"]}, []any{second, first})
	equal(t, "account members", accounts[0].(map[string]any)["name"], "second")
	equal(t, "enabled", accounts[0].(map[string]any)["disabled"], false)
	next := adm.ok(200, "GET", str(page["next_page_uri"]), nil)
	equal(t, "the bootstrap account on the last page", next["accounts"].([]any)[0].(map[string]any)["id"], c.srv.AccountID)
	equal(t, "last page", next["next_page_uri"], nil)
	equal(t, "one account", adm.ok(200, "GET", "/_admin/accounts/"+first, nil)["name"], "first")

	users := adm.ok(200, "GET", "/_admin/accounts/"+second+"/users?limit=1", nil)
	equal(t, "newest user", users["users"].([]any)[0].(map[string]any)["email"], "member@second.example")
	users = adm.ok(200, "GET", str(users["next_page_uri"]), nil)
	equal(t, "the admin user", users["users"].([]any)[0].(map[string]any)["role"], "admin")
	equal(t, "users' last page", users["next_page_uri"], nil)

	adm.fails(404, "", "GET", "/_admin/accounts/ac_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue/users", nil)
	adm.fails(404, "", "GET", "/_admin/accounts/ac_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", nil)
	adm.fails(400, "ERR_231", "GET", "/_admin/accounts?account_id="+first, nil)
	c.fails(403, "ERR_203", "GET", "/_admin/accounts", nil)
}

func TestAdminDisablesAnAccount(t *testing.T) {
	c := newTC(t)
	adm := c.as(c.srv.AdminToken)
	accountID, owner := newAccount(c, "tenant")
	owner.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	_, token := owner.credential("bind:app.example.com")
	agent := startAgent(t, owner, token, agentclient.TunnelConfig{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"})
	session := agent.SessionID()

	disabled := adm.ok(200, "POST", "/_admin/accounts/"+accountID+"/disable", nil)
	equal(t, "disabled", disabled["disabled"], true)
	owner.fails(403, "ERR_204", "GET", "/reserved_domains", nil)
	// The connected agent is disconnected and, coming back, refused.
	var refused *agentclient.RefusedError
	if err := agent.Exited(t); !errors.As(err, &refused) || refused.ErrorCode != "ERR_204" {
		t.Fatalf("the agent of a disabled account: Run = %v, want a refusal with ERR_204", err)
	}
	again, _ := agentclient.New(agentclient.Config{ServerURL: c.srv.URL, Authtoken: token, Tunnels: []agentclient.TunnelConfig{{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}}})
	if err := again.Run(t.Context()); !errors.As(err, &refused) || refused.StatusCode != 403 || refused.ErrorCode != "ERR_204" {
		t.Fatalf("a new agent of a disabled account: Run = %v, want 403 ERR_204", err)
	}
	// Other accounts are untouched; disabling twice is no error.
	c.ok(200, "GET", "/reserved_domains", nil)
	adm.ok(200, "POST", "/_admin/accounts/"+accountID+"/disable", map[string]any{})
	adm.fails(400, "ERR_214", "POST", "/_admin/accounts/"+accountID+"/disable", map[string]any{"why": "x"})

	// Enabled again: nothing was deleted, and the key and the credential work.
	equal(t, "enabled", adm.ok(200, "POST", "/_admin/accounts/"+accountID+"/enable", nil)["disabled"], false)
	equal(t, "the domain kept", len(owner.ok(200, "GET", "/reserved_domains", nil)["reserved_domains"].([]any)), 1)
	back := startAgent(t, owner, token, agentclient.TunnelConfig{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"})
	if back.SessionID() == session || back.SessionID() == "" {
		t.Fatalf("the agent after enable: session %q", back.SessionID())
	}
	adm.fails(404, "", "POST", "/_admin/accounts/ac_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue/disable", nil)
}

func TestAdminDeletesAnAccount(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, c *tc) {
		adm := c.as(c.srv.AdminToken)
		accountID, owner := newAccount(c, "doomed")
		member := adm.ok(201, "POST", "/_admin/accounts/"+accountID+"/users", map[string]any{"email": "m@doomed.example", "role": "member"})
		owner.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "doomed.example.com"})
		policy := owner.ok(201, "POST", "/ip_policies", map[string]any{"description": "office"})
		owner.ok(201, "POST", "/ip_policy_rules", map[string]any{"cidr": "10.0.0.0/8", "action": "allow", "ip_policy_id": policy["id"]})
		dest := owner.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})
		owner.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{dest["id"]}})
		owner.ok(201, "POST", "/ip_policies", map[string]any{"description": "an event"})
		credID, token := owner.credential("bind:doomed.example.com")
		agent := startAgent(t, owner, token, agentclient.TunnelConfig{Proto: "https", Hostname: "doomed.example.com", ForwardsTo: "http://localhost:8080"})
		// Another account's objects stay.
		kept := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "kept"})

		names := []string{accountID, str(member["user"].(map[string]any)["id"]), credID, str(policy["id"]), str(dest["id"]), agent.SessionID()}
		if n := rowsNaming(t, c, names...); n == "" {
			t.Fatal("before the deletion no row names the account: the check finds nothing")
		}
		adm.ok(204, "DELETE", "/_admin/accounts/"+accountID, nil)
		if n := rowsNaming(t, c, names...); n != "" {
			t.Fatalf("after the deletion: %s", n)
		}
		var refused *agentclient.RefusedError
		if err := agent.Exited(t); !errors.As(err, &refused) || refused.ErrorCode != "ERR_203" {
			t.Fatalf("the agent of a deleted account: Run = %v, want a refusal with ERR_203", err)
		}
		owner.fails(403, "ERR_203", "GET", "/ip_policies", nil)
		adm.fails(404, "", "GET", "/_admin/accounts/"+accountID, nil)
		adm.fails(404, "", "DELETE", "/_admin/accounts/"+accountID, nil)
		c.ok(200, "GET", "/ip_policies/"+str(kept["id"]), nil)
	})
}

// rowsNaming describes the rows of every table of the server's database that hold one of
// names in a column; "" when none does.
func rowsNaming(t *testing.T, c *tc, names ...string) string {
	t.Helper()
	db, _ := c.srv.Store.(interface{ DB() (write, read *sql.DB) }).DB()
	var tables, columns []string
	postgres := false
	if _, err := db.ExecContext(t.Context(), "SELECT 1 FROM sqlite_master LIMIT 1"); err != nil {
		postgres = true
	}
	listing := "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'"
	if postgres {
		listing = `SELECT table_name, CASE WHEN data_type = 'bytea' THEN 'encode(' || quote_ident(column_name) || ', ''escape'')'
			ELSE quote_ident(column_name) || '::text' END FROM information_schema.columns WHERE table_schema = current_schema()`
	}
	rows, err := db.QueryContext(t.Context(), listing)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		if !postgres {
			column = "CAST(" + column + " AS TEXT)"
		}
		tables, columns = append(tables, table), append(columns, column)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var found []string
	for i, table := range tables {
		for _, name := range names {
			var n int
			q := fmt.Sprintf("SELECT count(*) FROM %s WHERE strpos(%s, '%s') > 0", table, columns[i], name)
			if !postgres {
				q = fmt.Sprintf("SELECT count(*) FROM %s WHERE instr(%s, '%s') > 0", table, columns[i], name)
			}
			if err := db.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if n > 0 {
				found = append(found, fmt.Sprintf("%d rows of %s name %s in %s", n, table, name, columns[i]))
			}
		}
	}
	return strings.Join(found, "; ")
}
