package apiserver_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// startReplica runs another server on c's store until the test ends.
func startReplica(t *testing.T, c *tc, agents agentplane.Options) (*apiserver.Server, string) {
	t.Helper()
	srv, err := apiserver.New(context.Background(), apiserver.Options{
		Store: c.srv.Store, BaseURL: c.srv.URL, BootstrapAPIKey: c.srv.APIKey, Agents: agents,
		Events: apiserver.EventOptions{Workers: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); _ = srv.Close() })
	return srv, ts.URL
}

// replicaLeases lists the IDs of the leases in the store.
func replicaLeases(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	err := st.Read(context.Background(), func(tx store.Tx) error {
		leases, err := tx.List(context.Background(), store.ListQuery{Kind: apiserver.KindAgentReplica})
		for _, o := range leases {
			out = append(out, o.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAgentReplicaDiesWithoutClose: a replica that dies leaves its sessions in the store
// until its lease runs out; then another replica ends them as a disconnect would.
func TestAgentReplicaDiesWithoutClose(t *testing.T) {
	// The first replica renews slowly and never sweeps within the test: the rows of the
	// dead replica stay until the sweeper below starts.
	c := newTC(t, noDelivery, func(o *apiserver.Options) { o.Agents.Heartbeat = time.Minute })
	domain := str(c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})["id"])
	_, token := c.credential()
	d := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "agent_session_stop.v0"}}, "destination_ids": []any{d["id"]}})
	kept := connectAgent(t, c.srv.URL, token)
	equal(t, "one lease", len(replicaLeases(t, c.srv.Store)), 1)

	dying, dyingURL := startReplica(t, c, agentplane.Options{Heartbeat: 20 * time.Millisecond, ReplicaLease: 100 * time.Millisecond})
	a := connectAgent(t, dyingURL, token)
	bound := a.request(agentproto.Message{Type: agentproto.TypeBind, Proto: "https", Hostname: "app.example.com"})
	equal(t, "bound", bound.Type, agentproto.TypeBound)
	before := len(c.events())

	apiserver.Abandon(dying)
	a.waitClosed()
	// Nothing cleaned up after the dead replica.
	equal(t, "sessions after the death", c.listIDs("/tunnel_sessions"), []string{a.session, kept.session})
	c.ok(200, "GET", "/endpoints/"+bound.EndpointID, nil)
	equal(t, "leases after the death", len(replicaLeases(t, c.srv.Store)), 2)
	equal(t, "no event yet", len(c.events()), before)

	// A live replica sweeps the sessions of the replica whose lease ran out, and only those.
	startReplica(t, c, agentplane.Options{Heartbeat: 20 * time.Millisecond, ReplicaLease: time.Minute})
	apiservertest.WaitUntil(t, "the dead replica's session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 1 })
	equal(t, "the live replica's session stays", c.listIDs("/tunnel_sessions"), []string{kept.session})
	c.fails(404, "", "GET", "/tunnels/"+bound.TunnelID, nil)
	c.fails(404, "", "GET", "/endpoints/"+bound.EndpointID, nil)
	evs := c.events()
	equal(t, "one event written", len(evs), before+1)
	equal(t, "stop event", evs[0]["event_type"], "agent_session_stop.v0")
	equal(t, "stop object", evs[0]["object"].(map[string]any)["id"], a.session)
	apiservertest.WaitUntil(t, "the dead replica's lease is gone", func() bool { return len(replicaLeases(t, c.srv.Store)) == 2 })
	// The domain is free again: the endpoint no longer holds it.
	c.ok(204, "DELETE", "/reserved_domains/"+domain, nil)
}
