package apiserver_test

import "testing"

// TestFilterPagesPartlyInGo pages through a filter whose list equality CEL evaluates over the
// rows that the SQL part selects: each page is full and the last one has no next page.
func TestFilterPagesPartlyInGo(t *testing.T) {
	c := newTC(t)
	acls := [][]string{{"bind:web.example.com"}, {"bind:web.example.com", "bind:db.example.com"}, {"bind:db.example.com"}}
	for i := range 6 {
		d := []string{"web", "web", "db"}[i%3]
		c.ok(201, "POST", "/credentials", map[string]any{"description": d, "acl": acls[i%3]})
	}
	for _, filter := range []string{
		`obj.description == "web" && obj.acl == ["bind:web.example.com"]`,
		`obj.acl == ["bind:web.example.com"] || obj.created_at < timestamp("2000-01-01T00:00:00.5Z")`,
	} {
		next, pages, items := "/credentials?limit=1&filter="+urlEscape(filter), 0, 0
		for next != "" {
			page := c.ok(200, "GET", next, nil)
			pages++
			for _, item := range page["credentials"].([]any) {
				items++
				equal(t, "acl", len(item.(map[string]any)["acl"].([]any)), 1)
				equal(t, "description", item.(map[string]any)["description"], "web")
			}
			next = str(page["next_page_uri"])
		}
		equal(t, filter+": pages", pages, 2)
		equal(t, filter+": items", items, 2)
	}
}
