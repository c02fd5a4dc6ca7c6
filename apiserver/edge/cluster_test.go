package edge_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// cluster is replicas on one PostgreSQL database, each a server process of its own store
// with a cluster link: the agents connect to A (srv), the visitors to B's edge (env).
type cluster struct {
	*env
	a         *apiservertest.Server
	b         *apiserver.Server
	unlinkA   func() // closes A's link listener
	dsn       string
	keys      *sealing.Keyring
	configure func(*apiserver.Options) // of the replicas but A; nil for none
}

// linked makes a replica's link listen on ln and its plane read the others' tunnels often.
func linked(ln net.Listener) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.Agents.Link = ln.Addr().String()
		o.Agents.RemoteRefresh = 20 * time.Millisecond
	}
}

// newCluster starts replicas A and B; configureA and configure (nil for none) change the
// options of A and of the others.
func newCluster(t *testing.T, configureA, configure func(*apiserver.Options)) *cluster {
	t.Helper()
	c := &cluster{dsn: pgcluster.Database(t), configure: configure}
	lnA := listen(t)
	optsA := []func(*apiserver.Options){apiservertest.NoRateLimit, belowEphemeralPorts, linked(lnA)}
	if configureA != nil {
		optsA = append(optsA, configureA)
	}
	c.a = apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, c.dsn, seal)
	}, optsA...)
	c.unlinkA = c.a.ServeCluster(t, lnA)
	c.keys = c.a.Keys(t)
	var other store.Store
	c.b, other = c.replica(t)
	c.env = newEnvOnStore(t, c.a, other, c.b.EdgeTunnels())
	return c
}

// replica starts another linked replica, on a store of its own, until the test ends.
func (c *cluster) replica(t *testing.T) (*apiserver.Server, store.Store) {
	t.Helper()
	st, err := postgres.Open(t.Context(), c.dsn, sqlstore.WithKeys(c.keys))
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	opts := apiserver.Options{Store: st, BaseURL: c.a.URL, Events: apiserver.EventOptions{Workers: -1}}
	apiservertest.NoRateLimit(&opts)
	linked(ln)(&opts)
	if c.configure != nil {
		c.configure(&opts)
	}
	srv, err := apiserver.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeCluster(ln) }()
	t.Cleanup(func() { ln.Close(); _ = srv.Close(); st.Close() })
	return srv, st
}

// TestTrafficThroughAnotherReplica: an agent on replica A, visitors on replica B's HTTPS
// and TCP edges: B forwards their streams over the link to A, which holds the agent.
func TestTrafficThroughAnotherReplica(t *testing.T) {
	c := newCluster(t, nil, nil)
	c.tunnel("on-a", map[string]string{"app": "web"})
	web := c.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}})
	c.httpsEdge("cluster.example.test", web, nil)
	waitFor(t, "replica B serves the agent's app on A", func() bool {
		return strings.HasPrefix(c.tryGet("https://cluster.example.test/x"), "on-a GET /x")
	})

	addr, port := c.reserveAddr()
	c.agent(agentclient.TunnelConfig{Proto: "tcp", Labels: map[string]string{"app": "echo"}, ForwardsTo: echo(t, "echo-a")})
	group := c.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "echo"}})
	c.create("/edges/tcp", map[string]any{"hostports": []string{addr}, "backend": map[string]any{"backend_id": group}})
	waitFor(t, "replica B listens on the address, has the tcp edge and knows the tcp tunnel on A", func() bool {
		_, open := c.edge.TCPAddr(port)
		return open && c.edge.ServesTCPEdge(addr) && len(c.b.EdgeTunnels().Matching(c.a.AccountID, map[string]string{"app": "echo"})) == 1
	})
	roundTrip(t, c.dialTCP(port), "ping", "echo-a:ping")
}

// shortLease is the options of the replica that dies: its lease runs out soon after. Not
// sooner: the heartbeat also cuts off an agent silent for three intervals, and at 20 ms a
// loaded machine's stalls cut A's agents off (and swept A) again and again while A lived.
func shortLease(o *apiserver.Options) {
	o.Agents.Heartbeat, o.Agents.ReplicaLease = 250*time.Millisecond, 1500*time.Millisecond
}

// sweepOften is the options of the replicas that live: they sweep every second. Not more
// often: the heartbeat also sets their own lease (three heartbeats), how long their agents
// may be silent and how long a hello or a message may take, which a loaded machine's store
// and scheduler outlast at 100 ms (their agents' sessions were then cut or swept).
func sweepOften(o *apiserver.Options) { o.Agents.Heartbeat = time.Second }

// TestHolderDiesWhileTrafficFlows: replica A, which holds the agent, dies (its plane stops
// as a crashed process's would, its link closes) while visitors reach the agent through B:
// B answers every request, 502 or 503 (never a hang), and 503 ERR_8005 once A's lease is
// swept and the tunnel is gone.
func TestHolderDiesWhileTrafficFlows(t *testing.T) {
	c := newCluster(t, shortLease, sweepOften)
	c.tunnel("on-a", map[string]string{"app": "web"})
	web := c.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}})
	c.httpsEdge("dies.example.test", web, nil)
	waitFor(t, "replica B serves the agent's app on A", func() bool {
		return strings.HasPrefix(c.tryGet("https://dies.example.test/"), "on-a GET /")
	})

	client := c.client()
	// get's error is the client's, its timeout included: a hang fails the test.
	get := func() (status int, code string, err error) {
		resp, err := client.Get("https://dies.example.test/")
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Warren-Error-Code"), nil
	}
	answered := func(status int, code string, err error) bool {
		switch {
		case err != nil:
			t.Errorf("GET through B: %v", err)
		case status != http.StatusOK && status != http.StatusBadGateway && status != http.StatusServiceUnavailable:
			t.Errorf("GET through B: %d %s", status, code)
		default:
			return true
		}
		return false
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var served atomic.Int32
	wg.Go(func() { // traffic before, during and after the death
		for {
			select {
			case <-stop:
				return
			default:
			}
			status, code, err := get()
			if !answered(status, code, err) {
				return
			}
			if status == http.StatusOK {
				served.Add(1)
			}
		}
	})
	waitFor(t, "traffic flows through B", func() bool { return served.Load() > 0 })
	c.a.Plane.Abandon()
	c.unlinkA()
	waitFor(t, "B swept A's lease and forgot its tunnel", func() bool {
		return len(c.b.EdgeTunnels().Matching(c.a.AccountID, map[string]string{"app": "web"})) == 0
	})
	close(stop)
	wg.Wait()
	// From now on, no tunnel: every answer is the 503.
	for range 5 {
		if status, code, err := get(); err != nil || status != http.StatusServiceUnavailable || code != "ERR_8005" {
			t.Fatalf("GET through B once A is swept: %d %s %v", status, code, err)
		}
	}
}

// TestThreeReplicas: agents on A and C, visitors on B's and C's edges. B reaches both
// agents over the link; C serves its own agent's tunnel first. A dies while traffic flows
// through B: every answer is 200, 502 or 503, and once A is swept B and C serve C's agent.
func TestThreeReplicas(t *testing.T) {
	c := newCluster(t, shortLease, sweepOften)
	srvC, stC := c.replica(t)
	apiC := httptest.NewServer(srvC)
	t.Cleanup(apiC.Close)
	viaC := newEnvOnStore(t, c.a, stC, srvC.EdgeTunnels())
	viaC.ca = c.ca
	web := map[string]string{"app": "web"}
	c.tunnel("on-a", web)
	token := c.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	c.a.StartAgent(t, agentclient.Config{Authtoken: token, ServerURL: apiC.URL, Tunnels: []agentclient.TunnelConfig{
		{Proto: "http", Labels: web, ForwardsTo: "http://" + app(t, "on-c")},
	}})
	group := c.create("/backends/tunnel_group", map[string]any{"labels": web})
	c.httpsEdge("three.example.test", group, nil)

	seen := map[string]bool{}
	waitFor(t, "B reaches the agents on A and on C", func() bool {
		if body := c.tryGet("https://three.example.test/"); len(body) >= 4 {
			seen[body[:4]] = true
		}
		return seen["on-a"] && seen["on-c"]
	})
	waitFor(t, "C serves the edge", func() bool { return viaC.tryGet("https://three.example.test/") != "" })
	for range 10 {
		if body := viaC.tryGet("https://three.example.test/"); !strings.HasPrefix(body, "on-c ") {
			t.Fatalf("C served %q, want its own agent's tunnel first", body)
		}
	}

	client := c.client()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() { // traffic through B before, during and after A's death
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Get("https://three.example.test/")
			if err != nil {
				t.Errorf("GET through B: %v", err) // the client's timeout included: no hang
				return
			}
			resp.Body.Close()
			if s := resp.StatusCode; s != http.StatusOK && s != http.StatusBadGateway && s != http.StatusServiceUnavailable {
				t.Errorf("GET through B: %d", s)
				return
			}
		}
	})
	c.a.Plane.Abandon()
	c.unlinkA()
	waitFor(t, "A is swept: B knows C's tunnel only", func() bool {
		return len(c.b.EdgeTunnels().Matching(c.a.AccountID, web)) == 1
	})
	close(stop)
	wg.Wait()
	for i, via := range []*env{c.env, viaC} {
		for range 5 {
			if body := via.tryGet("https://three.example.test/"); !strings.HasPrefix(body, "on-c ") {
				for _, l := range via.logs.All() {
					t.Log(l.Message, l.ContextMap())
				}
				t.Fatalf("after A's death, through %s: %q, want C's agent", []string{"B", "C"}[i], body)
			}
		}
	}
}

// TestAgentEndpointsThroughAnotherReplica: the https and tcp agent endpoints of an agent on
// replica A are served by replica B's edge.
func TestAgentEndpointsThroughAnotherReplica(t *testing.T) {
	c := newCluster(t, nil, nil)
	c.domain("epc.example.test")
	c.agent(agentclient.TunnelConfig{Proto: "https", Hostname: "epc.example.test", ForwardsTo: "http://" + app(t, "secure-a")})
	waitFor(t, "B serves the https endpoint of the agent on A", func() bool {
		return strings.HasPrefix(c.tryGet("https://epc.example.test/y"), "secure-a GET /y")
	})
	addr, port := c.reserveAddr()
	c.agent(agentclient.TunnelConfig{Proto: "tcp", Addr: addr, ForwardsTo: echo(t, "ep-a")})
	waitFor(t, "B listens on the address and knows the endpoint on A", func() bool {
		_, open := c.edge.TCPAddr(port)
		_, known := c.b.EdgeTunnels().Endpoint("tcp", addr)
		return open && known
	})
	roundTrip(t, c.dialTCP(port), "tcp bytes", "ep-a:tcp bytes")
}
