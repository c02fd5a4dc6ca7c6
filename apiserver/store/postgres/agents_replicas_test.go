package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go.uber.org/zap/zaptest"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// replica is one API server on a shared PostgreSQL database.
type replica struct {
	t     *testing.T
	url   string
	token string
}

// startReplicas runs n servers, each with its own connection pool, on one fresh database.
func startReplicas(t *testing.T, n int, agents agentplane.Options) []*replica {
	t.Helper()
	urls, token, _ := serveReplicas(t, freshDatabase(t), n, func(o *apiserver.Options) {
		o.Agents, o.RateLimit, o.Events = agents, -1, apiserver.EventOptions{Workers: -1}
		o.Logger = zaptest.NewLogger(t).Named("replica") // printed only when the test fails
	})
	var out []*replica
	for _, url := range urls {
		out = append(out, &replica{t: t, url: url, token: token})
	}
	return out
}

// do sends an API request and returns the status and decoded body (nil when empty).
func (r *replica) do(method, path string, body any) (int, map[string]any) {
	r.t.Helper()
	var in io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		in = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, r.url+path, in)
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Service-Version", "2")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if data, _ := io.ReadAll(resp.Body); len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			r.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode, out
}

// ok sends a request that must answer want, and returns its body.
func (r *replica) ok(want int, method, path string, body any) map[string]any {
	r.t.Helper()
	status, out := r.do(method, path, body)
	if status != want {
		r.t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
	}
	return out
}

// ids lists the IDs of a list's members.
func (r *replica) ids(path, member string) []string {
	r.t.Helper()
	var out []string
	for _, it := range r.ok(200, "GET", path, nil)[member].([]any) {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

// agree waits until both replicas list exactly the sessions want (in any order) and
// the same tunnels. It waits because a session the agent gave up on (a connection dropped
// during the handshake on a loaded machine) is listed until its replica sees the socket
// close; nothing the replicas disagree on lasts.
func agree(t *testing.T, rs []*replica, want ...string) {
	t.Helper()
	var sessions, other, tunnels, otherTunnels []string
	settled := func() bool {
		sessions = rs[0].ids("/tunnel_sessions", "tunnel_sessions")
		other = rs[1].ids("/tunnel_sessions", "tunnel_sessions")
		tunnels = rs[0].ids("/tunnels", "tunnels")
		otherTunnels = rs[1].ids("/tunnels", "tunnels")
		return sameSet(sessions, want) && sameSet(other, want) && slices.Equal(tunnels, otherTunnels)
	}
	for deadline := time.Now().Add(15 * time.Second); !settled(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sessions: replica 1 lists %v, replica 2 %v, want %v; tunnels: replica 1 %v, replica 2 %v",
				sessions, other, want, tunnels, otherTunnels)
		}
	}
}

// runAgent runs a real agent against a replica until the test ends; Run's result arrives on
// the channel.
func runAgent(t *testing.T, r *replica, token string, tunnels ...agentclient.TunnelConfig) (*agentclient.Client, chan error) {
	t.Helper()
	agent, err := agentclient.New(agentclient.Config{
		ServerURL: r.url, Authtoken: token, AgentVersion: "1.0.0", Tunnels: tunnels,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Logger: zaptest.NewLogger(t).Named("agent"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
		}
	})
	apiservertest.WaitState(t, agent, "the agent is ready", func(s agentclient.State) bool { return s.Ready })
	return agent, done
}

func runResult(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		done <- err // for the cleanup
		return err
	case <-time.After(time.Minute):
		t.Fatal("the agent did not exit")
		return nil
	}
}

// TestAgentsAcrossReplicas connects real agents to replica 1 and drives them through
// replica 2: commands reach them and are answered, a credential deleted there drops their
// session, and both replicas list the same sessions and tunnels throughout.
func TestAgentsAcrossReplicas(t *testing.T) {
	rs := startReplicas(t, 2, agentplane.Options{
		Heartbeat: time.Second, CommandPoll: 10 * time.Millisecond, CommandTimeout: 30 * time.Second,
		ReplicaLease: time.Minute, // no replica is swept as dead on a slow machine
	})
	one, two := rs[0], rs[1]
	one.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	group := one.ok(201, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]any{"env": "prod"}})["id"].(string)
	cred := one.ok(201, "POST", "/credentials", map[string]any{"acl": []string{"bind:app.example.com"}})
	other := one.ok(201, "POST", "/credentials", map[string]any{"acl": []string{"bind:env=prod"}})

	a, aDone := runAgent(t, one, cred["token"].(string),
		agentclient.TunnelConfig{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"})
	b, bDone := runAgent(t, one, other["token"].(string),
		agentclient.TunnelConfig{Proto: "http", Labels: map[string]string{"env": "prod"}, ForwardsTo: "http://localhost:9090"})
	first := a.SessionID()
	agree(t, rs, b.SessionID(), first)
	// The group backend lists the labeled tunnel on both replicas.
	for _, r := range rs {
		members := r.ok(200, "GET", "/backends/tunnel_group/"+group, nil)["tunnels"].([]any)
		if len(members) != 1 || members[0].(map[string]any)["id"] != b.Tunnels()[0].ID {
			t.Fatalf("%s: group tunnels %v", r.url, members)
		}
	}

	// update: the agent answers through replica 1 that it has none.
	status, body := two.do("POST", "/tunnel_sessions/"+first+"/update", map[string]any{})
	if status != 400 || body["error_code"] != "ERR_809" {
		t.Fatalf("update through replica 2: %d %v", status, body)
	}
	// restart: the agent comes back with a new session, seen by both replicas.
	// The old session is gone once the command is answered, so the agent, reconnecting at
	// once, binds its hostname again without a refusal.
	two.ok(204, "POST", "/tunnel_sessions/"+first+"/restart", map[string]any{})
	for _, r := range rs {
		r.ok(404, "GET", "/tunnel_sessions/"+first, nil)
	}
	st := apiservertest.WaitState(t, a, "a new session", func(s agentclient.State) bool { return s.Ready && s.SessionID != first })
	if len(st.Refused) > 0 {
		t.Fatalf("binds refused after the restart: %+v", st.Refused)
	}
	second := st.SessionID
	agree(t, rs, second, b.SessionID())
	// stop: the agent exits cleanly.
	two.ok(204, "POST", "/tunnel_sessions/"+b.SessionID()+"/stop", map[string]any{})
	if err := runResult(t, bDone); err != nil {
		t.Fatalf("Run after stop: %v", err)
	}
	agree(t, rs, second)

	// A credential deleted through replica 2 drops the session held by replica 1: the agent
	// is cut off, and its reconnection refused.
	two.ok(204, "DELETE", "/credentials/"+cred["id"].(string), nil)
	var refused *agentclient.RefusedError
	if err := runResult(t, aDone); !errors.As(err, &refused) {
		t.Fatalf("Run after the credential's deletion: %v", err)
	}
	agree(t, rs)
	if got := one.ids("/endpoints", "endpoints"); len(got) != 0 {
		t.Fatalf("endpoints after the deletion: %v", got)
	}
}

// sameSet says whether a and b hold the same IDs, whatever their order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
