package apiserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// pagedIDs walks a list page by page (limit=100, following next_page_uri) and returns the
// IDs of member, and the number of pages.
func (c *tc) pagedIDs(path, member string) (out []string, pages int) {
	c.t.Helper()
	next := path + "?limit=100"
	for next != "" {
		body := c.ok(200, "GET", next, nil)
		pages++
		for _, it := range body[member].([]any) {
			out = append(out, str(it.(map[string]any)["id"]))
		}
		next = str(body["next_page_uri"])
	}
	return out, pages
}

// TestAgentsAtScale runs 200 real agents against one server: all get a session and a
// tunnel, the lists page through all of them, and a stop sent to each empties the lists.
func TestAgentsAtScale(t *testing.T) {
	const n = 200
	// The rate limit is per account, and this test is one account's 200 agents.
	c := newTC(t, noDelivery, apiservertest.NoRateLimit)
	_, token := c.credential("bind:agent=*")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agents := make([]*agentclient.Client, n)
	results := make(chan error, n)
	for i := range agents {
		a, err := agentclient.New(agentclient.Config{
			ServerURL: c.srv.URL, Authtoken: token, AgentVersion: "1.0.0",
			Tunnels: []agentclient.TunnelConfig{{Proto: "http", Labels: map[string]string{"agent": fmt.Sprint(i)}, ForwardsTo: "http://localhost:8080"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		agents[i] = a
		go func() { results <- a.Run(ctx) }()
	}
	sessions := map[string]bool{}
	for _, a := range agents {
		sessions[apiservertest.WaitState(t, a, "every agent is ready", func(s agentclient.State) bool { return s.Ready }).SessionID] = true
	}
	equal(t, "distinct sessions", len(sessions), n)

	listed, pages := c.pagedIDs("/tunnel_sessions", "tunnel_sessions")
	equal(t, "pages", pages, 2)
	equal(t, "sessions listed", len(listed), n)
	for _, id := range listed {
		if !sessions[id] {
			t.Fatalf("listed session %s is no agent's", id)
		}
	}
	tunnels, _ := c.pagedIDs("/tunnels", "tunnels")
	equal(t, "tunnels listed", len(tunnels), n)

	// Stop every agent through the API, a few requests at a time.
	var wg sync.WaitGroup
	ids := make(chan string)
	for range 8 {
		wg.Go(func() {
			for id := range ids {
				if r := c.req("POST", "/tunnel_sessions/"+id+"/stop", map[string]any{}); r.status != 204 {
					t.Errorf("stop %s: %d %s", id, r.status, r.raw)
				}
			}
		})
	}
	for id := range sessions {
		ids <- id
	}
	close(ids)
	wg.Wait()
	timeout := time.After(time.Minute) // bounds a hung test
	for range n {
		select {
		case err := <-results:
			if err != nil {
				t.Fatalf("an agent's Run after stop: %v", err)
			}
		case <-timeout:
			t.Fatal("not every agent exited on stop")
		}
	}
	// The server deletes each exited agent's rows in its own transaction.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // bounds a hung test
		s, _ := c.pagedIDs("/tunnel_sessions", "tunnel_sessions")
		tn, _ := c.pagedIDs("/tunnels", "tunnels")
		if len(s) == 0 && len(tn) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions and %d tunnels still listed after every agent exited", len(s), len(tn))
		}
	}
}
