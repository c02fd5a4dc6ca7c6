package agentclient

import (
	"slices"
	"testing"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/internal/agentclient/agentpeer"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// welcomeOn answers pc's Hello with a Welcome of session on replica listing replicas, then
// binds; it returns the Hello.
func welcomeOn(t *testing.T, pc *agentpeer.Conn, session, replica string, replicas []agentproto.Replica, binds int) agentproto.Message {
	t.Helper()
	hello := pc.Read(t)
	if hello.Type != agentproto.TypeHello {
		t.Fatalf("first message %+v, want hello", hello)
	}
	pc.Send(t, agentproto.Message{Type: agentproto.TypeWelcome, ID: hello.ID, SessionID: session, HeartbeatMillis: 3_600_000, Replica: replica, Replicas: replicas})
	for range binds {
		b := pc.Read(t)
		if b.Type != agentproto.TypeBind || b.Hostname != "app.example.com" {
			t.Fatalf("message %+v, want the bind of app.example.com", b)
		}
		pc.Send(t, agentproto.Message{Type: agentproto.TypeBound, ID: b.ID, TunnelID: "tn_" + session, EndpointID: "ep_" + session, URL: "https://app.example.com"})
	}
	return hello
}

var appTunnel = []TunnelConfig{{Proto: "https", Hostname: "app.example.com", ForwardsTo: "http://localhost:8080"}}

// TestExtraConnection: with two connections, the first session goes through the server URL
// and the second to the other replica its Welcome lists, with the same instance in both
// Hellos and the same binds; a stop on the second stops the agent.
func TestExtraConnection(t *testing.T) {
	p1, p2 := agentpeer.New(t, testToken), agentpeer.New(t, testToken)
	replicas := []agentproto.Replica{{ID: "agrep_1", URL: p1.URL}, {ID: "agrep_2", URL: p2.URL}}
	a := startAgent(t, p1, Config{Connections: 2, Tunnels: appTunnel})
	first := p1.Accept(t)
	hello1 := welcomeOn(t, first, "ts_1", "agrep_1", replicas, 1)
	second := p2.Accept(t)
	hello2 := welcomeOn(t, second, "ts_2", "agrep_2", nil, 1)
	if hello1.Instance == "" || hello2.Instance != hello1.Instance {
		t.Fatalf("instances %q and %q, want one, the same", hello1.Instance, hello2.Instance)
	}
	s := a.waitFor(t, "a ready session on each replica", func(s State) bool {
		return len(s.Connections) == 2 && s.Connections[0].Ready && s.Connections[1].Ready
	})
	want := []Connection{{Replica: "agrep_1", SessionID: "ts_1", Ready: true}, {Replica: "agrep_2", SessionID: "ts_2", Ready: true, slot: 1}}
	if !slices.Equal(s.Connections, want) || s.SessionID != "ts_1" || s.Sessions != 1 || len(s.Tunnels) != 1 {
		t.Fatalf("state %+v", s)
	}

	second.Send(t, agentproto.Message{Type: agentproto.TypeCommand, ID: "stop-2", Command: agentproto.CommandStop})
	if res := second.Read(t); res.Type != agentproto.TypeCommandResult || res.ID != "stop-2" || res.Error != "" {
		t.Fatalf("stop answered %+v", res)
	}
	if err := a.result(t); err != nil {
		t.Fatalf("Run after a stop on the second session: %v", err)
	}
	if code := first.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("the first session's close status %v", code)
	}
}

// TestExtraConnectionOnHeldReplica: an address that leads to a replica the agent already
// holds a session on is left at once; the agent tries again later (after its backoff).
func TestExtraConnectionOnHeldReplica(t *testing.T) {
	p1, p2 := agentpeer.New(t, testToken), agentpeer.New(t, testToken)
	replicas := []agentproto.Replica{{ID: "agrep_1", URL: p1.URL}, {ID: "agrep_2", URL: p2.URL}}
	a := startAgent(t, p1, Config{Connections: 2, Tunnels: appTunnel})
	welcomeOn(t, p1.Accept(t), "ts_1", "agrep_1", replicas, 1)
	// p2's address leads to agrep_1 (a load balancer, say).
	second := p2.Accept(t)
	welcomeOn(t, second, "ts_2", "agrep_1", nil, 0)
	if code := second.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v", code)
	}
	again := p2.Accept(t) // after the backoff
	welcomeOn(t, again, "ts_3", "agrep_2", nil, 1)
	a.waitFor(t, "a session on each replica", func(s State) bool {
		return len(s.Connections) == 2 && s.Connections[1].Replica == "agrep_2" && s.Connections[1].Ready
	})
	if len(a.backoffs()) == 0 {
		t.Error("no backoff before dialing the address again")
	}
}

// TestExtraConnectionYields: the first session, reconnected through the server URL, reaches
// the replica an extra session holds: the extra leaves it for a replica the agent holds none on.
func TestExtraConnectionYields(t *testing.T) {
	p1, p2 := agentpeer.New(t, testToken), agentpeer.New(t, testToken)
	replicas := []agentproto.Replica{{ID: "agrep_1", URL: p1.URL}, {ID: "agrep_2", URL: p2.URL}}
	a := startAgent(t, p1, Config{Connections: 2, Tunnels: appTunnel})
	first := p1.Accept(t)
	welcomeOn(t, first, "ts_1", "agrep_1", replicas, 1)
	extra := p2.Accept(t)
	welcomeOn(t, extra, "ts_2", "agrep_2", nil, 1)
	a.waitFor(t, "a session on each replica", func(s State) bool { return len(s.Connections) == 2 })

	_ = first.WS.Close(websocket.StatusGoingAway, "replica restarting")
	// The server URL now leads to agrep_2 (the load balancer's choice).
	welcomeOn(t, p1.Accept(t), "ts_3", "agrep_2", replicas, 1)
	if code := extra.Closed(t); code != websocket.StatusNormalClosure {
		t.Errorf("the extra session's close status %v", code)
	}
	welcomeOn(t, p1.Accept(t), "ts_4", "agrep_1", nil, 1) // the extra, at agrep_1's address
	s := a.waitFor(t, "a session on each replica again", func(s State) bool {
		return len(s.Connections) == 2 && s.Connections[1].SessionID == "ts_4" && s.Connections[1].Ready
	})
	if s.Connections[0].Replica != "agrep_2" || s.Connections[1].Replica != "agrep_1" {
		t.Fatalf("connections %+v", s.Connections)
	}
}
