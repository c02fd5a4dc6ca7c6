package apiserver_test

import (
	"errors"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// These tests run the real agent (internal/agentclient, what warren-agent runs) against the
// real server.

// startAgent runs an agent until the test ends and waits until its binds are answered.
func startAgent(t *testing.T, c *tc, token string, tunnels ...agentclient.TunnelConfig) *apiservertest.Agent {
	t.Helper()
	return c.srv.StartAgent(t, agentclient.Config{Authtoken: token, AgentVersion: "1.2.3", Region: "eu", Metadata: "e2e", Tunnels: tunnels})
}

func TestAgentClientEndToEnd(t *testing.T) {
	c := newTC(t)
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	group := c.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]any{"env": "prod"}})
	credID, token := c.credential("bind:app.example.com", "bind:env=*")
	agent := startAgent(t, c, token,
		agentclient.TunnelConfig{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"},
		agentclient.TunnelConfig{Proto: "http", Labels: map[string]string{"env": "prod"}, ForwardsTo: "http://localhost:9090"})

	first := agent.SessionID()
	session := c.ok(200, "GET", "/tunnel_sessions/"+first, nil)
	equal(t, "session", []any{session["agent_version"], session["region"], session["metadata"], session["credential"].(map[string]any)["id"], session["ip"]},
		[]any{"1.2.3", "eu", "e2e", credID, "127.0.0.1"})
	tunnels := agent.Tunnels()
	equal(t, "url", tunnels[0].URL, "https://app.example.com")
	equal(t, "tunnels listed", len(c.listIDs("/tunnels")), 2)
	members := c.ok(200, "GET", "/backends/tunnel_group/"+str(group["id"]), nil)["tunnels"].([]any)
	equal(t, "the group lists the labeled tunnel", str(members[0].(map[string]any)["id"]), tunnels[1].ID)

	// update: this agent has no update channel, and says so.
	c.fails(400, "ERR_809", "POST", "/tunnel_sessions/"+first+"/update", map[string]any{})
	// restart: the agent comes back with a new session, and the old one is gone.
	// The old session is gone with the answer, so the agent, back at once, binds its
	// hostname again without a refusal.
	c.ok(204, "POST", "/tunnel_sessions/"+first+"/restart", map[string]any{})
	c.fails(404, "", "GET", "/tunnel_sessions/"+first, nil)
	s := agent.WaitFor(t, "a new session", func(s agentclient.State) bool { return s.Ready && s.SessionID != first })
	equal(t, "binds refused after the restart", len(s.Refused), 0)
	// A connection the agent gave up on during a handshake (a loaded machine) stays listed
	// until the server sees it close: wait for the one session.
	apiservertest.WaitUntil(t, "one session listed", func() bool {
		ids := c.listIDs("/tunnel_sessions")
		return len(ids) == 1 && ids[0] == s.SessionID
	})
	// stop: the agent exits cleanly and its session and tunnels go.
	c.ok(204, "POST", "/tunnel_sessions/"+s.SessionID+"/stop", map[string]any{})
	if err := agent.Exited(t); err != nil {
		t.Fatalf("Run after stop: %v", err)
	}
	apiservertest.WaitUntil(t, "sessions and tunnels gone", func() bool {
		return len(c.listIDs("/tunnel_sessions")) == 0 && len(c.listIDs("/tunnels")) == 0
	})
}

func TestAgentClientRefused(t *testing.T) {
	c := newTC(t)
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	_, token := c.credential("bind:other.example.com")
	agent, err := agentclient.New(agentclient.Config{ServerURL: c.srv.URL, Authtoken: token, Tunnels: []agentclient.TunnelConfig{{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}}})
	if err != nil {
		t.Fatal(err)
	}
	var bindErr *agentclient.BindError
	if err := agent.Run(t.Context()); !errors.As(err, &bindErr) {
		t.Fatalf("Run with a bind the ACL refuses: %v", err)
	}
	bad, _ := agentclient.New(agentclient.Config{ServerURL: c.srv.URL, Authtoken: "2Ajx5GWqUPMFdbJPdrVk8pOL6Ue_3dfF2DxqpJEwhnxVpuGYK", Tunnels: []agentclient.TunnelConfig{{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}}})
	var refused *agentclient.RefusedError
	if err := bad.Run(t.Context()); !errors.As(err, &refused) {
		t.Fatalf("Run with an unknown token: %v", err)
	}
}
