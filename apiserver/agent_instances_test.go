package apiserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// instance makes connectAgent's Hello name an agent instance.
func instance(name string) func(*testAgent) { return func(a *testAgent) { a.instance = name } }

// TestAgentInstanceSharesBinds: the sessions of one agent instance (one agent keeping
// several connections) bind the same hostname and address, each with a tunnel of its own.
// Another instance, an agent naming none, another credential naming the same instance,
// another proto and a second tunnel of one session are refused as before; the hostname
// stays taken until the instance's last session ends.
func TestAgentInstanceSharesBinds(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.Agents.Advertise = "https://replica-1.example.com" })
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "shared.example.com"})
	addr := str(c.ok(201, "POST", "/reserved_addrs", map[string]any{})["addr"])
	_, token := c.credential()
	host := agentproto.Message{Type: agentproto.TypeBind, Proto: "https", Hostname: "shared.example.com", ForwardsTo: "http://localhost:8080"}
	tcp := agentproto.Message{Type: agentproto.TypeBind, Proto: "tcp", Addr: addr, ForwardsTo: "localhost:22"}
	bound := func(a *testAgent, m agentproto.Message) (tunnelID string) {
		t.Helper()
		got := a.request(m)
		if got.Type != agentproto.TypeBound {
			t.Fatalf("bind %s%s on session %s: %+v", m.Hostname, m.Addr, a.session, got)
		}
		return got.TunnelID
	}
	refused := func(a *testAgent, m agentproto.Message, code string) {
		t.Helper()
		if got := a.request(m); got.Type != agentproto.TypeError || got.ErrorCode != code {
			t.Fatalf("bind %s %s%s on session %s: %+v, want %s", m.Proto, m.Hostname, m.Addr, a.session, got, code)
		}
	}

	first := connectAgent(t, c.srv.URL, token, instance("agent-1"))
	second := connectAgent(t, c.srv.URL, token, instance("agent-1"))
	if first.replica != c.srv.Plane.Replica() {
		t.Fatalf("welcome names replica %q, want %q", first.replica, c.srv.Plane.Replica())
	}
	if got := c.srv.Plane.Peers(); len(got) != 1 || got[0] != (agentproto.Replica{ID: c.srv.Plane.Replica(), URL: "https://replica-1.example.com"}) {
		t.Fatalf("peers %+v, want this replica at its advertised address", got)
	}
	firstTunnel := bound(first, host)
	bound(first, tcp)
	secondTunnel := bound(second, host)
	bound(second, tcp)
	// The edge finds the newest.
	if got, ok := c.srv.Plane.Endpoint("https", "shared.example.com:443"); !ok || got.ID != secondTunnel {
		t.Fatalf("endpoint %+v %v, want tunnel %s", got, ok, secondTunnel)
	}
	if n := len(c.listIDs("/tunnels")); n != 4 {
		t.Fatalf("%d tunnels, want a hostname and an address tunnel on each session", n)
	}

	refused(first, host, "ERR_7119") // a second tunnel of one session
	for _, other := range []*testAgent{
		connectAgent(t, c.srv.URL, token, instance("agent-2")),
		connectAgent(t, c.srv.URL, token), // an agent of before: no instance
		connectAgent(t, c.srv.URL, func() string { _, tk := c.credential(); return tk }(), instance("agent-1")),
	} {
		refused(other, host, "ERR_7119")
		refused(other, tcp, "ERR_7115")
	}
	tls := host
	tls.Proto = "tls"
	refused(connectAgent(t, c.srv.URL, token, instance("agent-1")), tls, "ERR_7119")

	// The second session ends: the first holds the hostname and the address still, and the
	// edge finds its tunnel.
	_ = second.ws.Close(websocket.StatusNormalClosure, "")
	apiservertest.WaitUntil(t, "the second session's tunnels are gone", func() bool { return len(c.listIDs("/tunnels")) == 2 })
	if got, ok := c.srv.Plane.Endpoint("https", "shared.example.com:443"); !ok || got.ID != firstTunnel {
		t.Fatalf("endpoint %+v %v, want tunnel %s", got, ok, firstTunnel)
	}
	later := connectAgent(t, c.srv.URL, token, instance("agent-2"))
	refused(later, host, "ERR_7119")
	refused(later, tcp, "ERR_7115")
	// The last ends: they are free.
	_ = first.ws.Close(websocket.StatusNormalClosure, "")
	apiservertest.WaitUntil(t, "every tunnel is gone", func() bool { return len(c.listIDs("/tunnels")) == 0 })
	bound(later, host)
	bound(later, tcp)
}

// TestAgentInstanceChecked: an instance name that is not short and plain is refused at the
// Hello (ERR_215), and no session starts.
func TestAgentInstanceChecked(t *testing.T) {
	c := newTC(t)
	_, token := c.credential()
	for _, name := range []string{"has space", "slash/", strings.Repeat("a", agentproto.MaxInstance+1)} {
		_, mux := dialV2(t, c.srv.URL, token)
		ctl, err := mux.OpenControl()
		if err != nil {
			t.Fatal(err)
		}
		if err := ctl.Write(context.Background(), agentproto.Message{Type: agentproto.TypeHello, ID: "h", Instance: name}); err != nil {
			t.Fatal(err)
		}
		m, err := ctl.Read(context.Background())
		if err != nil || m.Type != agentproto.TypeError || m.ErrorCode != "ERR_215" {
			t.Fatalf("hello with instance %q: %+v, %v", name, m, err)
		}
	}
	if ids := c.listIDs("/tunnel_sessions"); len(ids) != 0 {
		t.Fatalf("sessions %v, want none", ids)
	}
}
