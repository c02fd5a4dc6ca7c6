package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// TestAgentViews reads the sessions, tunnels and endpoints of a real agent and sends it the
// session commands.
func TestAgentViews(t *testing.T) {
	srv := apiservertest.Start(t)
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})
	ctx := context.Background()
	domain, err := c.ReservedDomains.Create(ctx, api.ReservedDomainCreate{Domain: api.String("app.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	group, err := c.TunnelGroupBackends.Create(ctx, api.TunnelGroupBackendCreate{Labels: map[string]string{"env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := c.Credentials.Create(ctx, api.CredentialCreate{ACL: []string{"bind:app.example.com", "bind:env=prod"}})
	if err != nil {
		t.Fatal(err)
	}
	agent := srv.StartAgent(t, agentclient.Config{Authtoken: *cred.Token, AgentVersion: "1.2.3", Region: "eu", Tunnels: []agentclient.TunnelConfig{
		{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"},
		{Proto: "http", Labels: map[string]string{"env": "prod"}, ForwardsTo: "http://localhost:9090"},
	}})
	first := agent.SessionID()
	bound := agent.Tunnels()

	sess, err := c.TunnelSessions.Get(ctx, first)
	if err != nil || sess.AgentVersion != "1.2.3" || sess.Region != "eu" || sess.Credential.ID != cred.ID || sess.IP != "127.0.0.1" {
		t.Fatalf("TunnelSessions.Get = %+v, %v", sess, err)
	}
	if list, err := c.TunnelSessions.List(ctx, client.ListOptions{Filter: `obj.agent_version == "1.2.3"`}); err != nil || len(list) != 1 || list[0].ID != first {
		t.Fatalf("TunnelSessions.List with a matching filter = %+v, %v", list, err)
	}
	if list, err := c.TunnelSessions.List(ctx, client.ListOptions{Filter: `obj.region == "us"`}); err != nil || len(list) != 0 {
		t.Fatalf("TunnelSessions.List with a filter matching nothing = %+v, %v", list, err)
	}

	// One tunnel per page: the iterator follows next_page_uri.
	var pages [][]string
	for items, err := range c.Tunnels.Pages(ctx, client.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, tn := range items {
			page = append(page, tn.ID)
		}
		pages = append(pages, page)
	}
	if len(pages) != 2 || len(pages[0]) != 1 || len(pages[1]) != 1 {
		t.Fatalf("Tunnels.Pages(limit 1) = %v", pages)
	}
	labeled, err := c.Tunnels.Get(ctx, bound[1].ID)
	if err != nil || labeled.Proto != "http" || labeled.ForwardsTo != "http://localhost:9090" || labeled.TunnelSession.ID != first ||
		labeled.Labels["env"] != "prod" || len(labeled.Backends) != 1 || labeled.Backends[0].ID != group.ID || labeled.Endpoint != nil {
		t.Fatalf("Tunnels.Get(labeled) = %+v, %v", labeled, err)
	}

	ep, err := c.Endpoints.Get(ctx, bound[0].EndpointID)
	if err != nil || ep.URL != "https://app.example.com" || ep.Proto != "https" || ep.Tunnel.ID != bound[0].ID || ep.Domain.ID != domain.ID ||
		ep.Host != "app.example.com" || ep.Port != 443 || !slices.Equal(ep.Bindings, []string{"public"}) {
		t.Fatalf("Endpoints.Get = %+v, %v", ep, err)
	}
	if list, err := c.Endpoints.List(ctx, client.ListOptions{Filter: `obj.proto == "https"`}); err != nil || len(list) != 1 || list[0].ID != ep.ID {
		t.Fatalf("Endpoints.List(https) = %+v, %v", list, err)
	}
	if _, err := c.Endpoints.List(ctx, client.ListOptions{Filter: `obj.nope == 1`}); errCode(err) != "ERR_250" {
		t.Fatalf("Endpoints.List with a bad filter = %v", err)
	}

	// update: this agent has no update channel and answers so, with its code.
	if err := c.TunnelSessions.Update(ctx, first); errCode(err) != agentclient.ErrCodeNoUpdate {
		t.Fatalf("Update = %v", err)
	}
	// restart: a new session; the old one is gone.
	if err := c.TunnelSessions.Restart(ctx, first); err != nil {
		t.Fatalf("Restart = %v", err)
	}
	second := agent.WaitFor(t, "a new session", func(s agentclient.State) bool { return s.Ready && s.SessionID != first }).SessionID
	waitGone(t, c, first)
	// stop: the agent exits cleanly; its session is gone.
	if err := c.TunnelSessions.Stop(ctx, second); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if err := agent.Exited(t); err != nil {
		t.Fatalf("the agent's Run after stop = %v", err)
	}
	waitGone(t, c, second)
	if err := c.TunnelSessions.Stop(ctx, second); !client.IsNotFound(err) {
		t.Fatalf("Stop of a gone session = %v", err)
	}
}

// waitGone waits until the server has removed the session of an agent that left: the
// server ends it when it sees the connection close, just after the agent's side.
func waitGone(t *testing.T, c *client.Client, sessionID string) {
	t.Helper()
	apiservertest.WaitUntil(t, "session "+sessionID+" gone", func() bool {
		_, err := c.TunnelSessions.Get(context.Background(), sessionID)
		return client.IsNotFound(err)
	})
}

// errCode is the API error code of err, "" when err is not an API error.
func errCode(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return ""
}
