package edge_test

import (
	"context"
	"net"
	"net/http"
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

// cluster is two replicas on one PostgreSQL database, each a server process of its own
// store with a cluster link: the agents connect to A (srv), the visitors to B's edge (env).
type cluster struct {
	*env
	a       *apiservertest.Server
	b       *apiserver.Server
	unlinkA func() // closes A's link listener
}

// linked makes a replica's link listen on ln and its plane read the others' tunnels often.
func linked(ln net.Listener) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.Agents.Link = ln.Addr().String()
		o.Agents.RemoteRefresh = 20 * time.Millisecond
	}
}

// configure changes the options of both replicas.
func newCluster(t *testing.T, configure ...func(*apiserver.Options)) *cluster {
	t.Helper()
	dsn := pgcluster.Database(t)
	lnA, lnB := listen(t), listen(t)
	a := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, append([]func(*apiserver.Options){apiservertest.NoRateLimit, belowEphemeralPorts, linked(lnA)}, configure...)...)
	unlinkA := a.ServeCluster(t, lnA)
	key, err := sealing.ParseKey(a.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := sealing.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	other, err := postgres.Open(t.Context(), dsn, sqlstore.WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	opts := apiserver.Options{Store: other, BaseURL: a.URL, Events: apiserver.EventOptions{Workers: -1}}
	apiservertest.NoRateLimit(&opts)
	linked(lnB)(&opts)
	for _, f := range configure {
		f(&opts)
	}
	b, err := apiserver.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.ServeCluster(lnB) }()
	t.Cleanup(func() { lnB.Close(); _ = b.Close(); other.Close() })
	return &cluster{env: newEnvOnStore(t, a, other, b.EdgeTunnels()), a: a, b: b, unlinkA: unlinkA}
}

// TestTrafficThroughAnotherReplica: an agent on replica A, visitors on replica B's HTTPS
// and TCP edges: B forwards their streams over the link to A, which holds the agent.
func TestTrafficThroughAnotherReplica(t *testing.T) {
	c := newCluster(t)
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
	waitFor(t, "replica B listens on the address and knows the tcp tunnel on A", func() bool {
		_, open := c.edge.TCPAddr(port)
		return open && len(c.b.EdgeTunnels().Matching(c.a.AccountID, map[string]string{"app": "echo"})) == 1
	})
	roundTrip(t, c.dialTCP(port), "ping", "echo-a:ping")
}

// TestHolderDiesWhileTrafficFlows: replica A, which holds the agent, dies (its plane stops
// as a crashed process's would, its link closes) while visitors reach the agent through B:
// B answers every request, 502 or 503 (never a hang), and 503 ERR_8005 once A's lease is
// swept and the tunnel is gone.
func TestHolderDiesWhileTrafficFlows(t *testing.T) {
	c := newCluster(t, func(o *apiserver.Options) {
		o.Agents.Heartbeat, o.Agents.ReplicaLease = 20*time.Millisecond, 200*time.Millisecond
	})
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
