package edge_test

import (
	"context"
	"net"
	"strings"
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
	a *apiservertest.Server
	b *apiserver.Server
}

// linked makes a replica's link listen on ln and its plane read the others' tunnels often.
func linked(ln net.Listener) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.Agents.Link = ln.Addr().String()
		o.Agents.RemoteRefresh = 20 * time.Millisecond
	}
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	dsn := pgcluster.Database(t)
	lnA, lnB := listen(t), listen(t)
	a := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, apiservertest.NoRateLimit, belowEphemeralPorts, linked(lnA))
	a.ServeCluster(t, lnA)
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
	b, err := apiserver.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.ServeCluster(lnB) }()
	t.Cleanup(func() { lnB.Close(); _ = b.Close(); other.Close() })
	return &cluster{env: newEnvOnStore(t, a, other, b.EdgeTunnels()), a: a, b: b}
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
