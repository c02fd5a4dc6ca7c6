package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// Agents on every replica: an agent keeping two connections holds a session on each of two
// replicas, found through the agent address each replica advertises, so that each replica
// serves the agent's endpoint from a tunnel of its own.

// quickLeases are the options of both replicas: a dead one is swept within seconds, and a
// live one, and its agents, silent for three heartbeats before they are cut, have time to
// answer on a busy machine (a session cut there would send its visitors over the link).
func quickLeases(o *apiserver.Options) {
	o.Agents.Heartbeat, o.Agents.ReplicaLease = 300*time.Millisecond, 3*time.Second
}

// agentReplica is a replica started by the test, with an API listener of its own whose
// address it advertises to agents, and a cluster link.
type agentReplica struct {
	srv     *apiserver.Server
	st      store.Store
	api     *http.Server
	url     string // the API's, advertised
	link    net.Listener
	stopAPI sync.Once
}

// startAgentReplica starts a replica of a's database whose API listens on addr
// ("127.0.0.1:0" for any port) until the test ends or kill.
func startAgentReplica(t *testing.T, a *apiservertest.Server, dsn string, keys *sealing.Keyring, addr string) *agentReplica {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, sqlstore.WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &agentReplica{st: st, url: "http://" + ln.Addr().String(), link: listen(t)}
	opts := apiserver.Options{Store: st, BaseURL: a.URL, Events: apiserver.EventOptions{Workers: -1}}
	apiservertest.NoRateLimit(&opts)
	linked(r.link)(&opts)
	quickLeases(&opts)
	opts.Agents.Advertise = r.url
	if r.srv, err = apiserver.New(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	r.api = &http.Server{Handler: r.srv}
	go func() { _ = r.api.Serve(ln) }()
	go func() { _ = r.srv.ServeCluster(r.link) }()
	t.Cleanup(func() { r.kill(); _ = r.srv.Close(); st.Close() })
	return r
}

// kill stops the replica as a crashed process: its plane stops without ending its sessions
// (their sockets close), its API and link listeners close.
func (r *agentReplica) kill() {
	r.stopAPI.Do(func() {
		r.srv.AgentPlane().Abandon()
		_ = r.api.Close()
		_ = r.link.Close()
	})
}

// streamsOpened is a replica's count of visitor streams opened through its own agent
// sessions (warren_agent_streams_opened_total{outcome="opened"}): a request it forwarded to
// another replica counts in the other's.
func streamsOpened(t *testing.T, apiURL string) int {
	t.Helper()
	resp, err := http.Get(apiURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const series = `warren_agent_streams_opened_total{outcome="opened"} `
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s%s: %v", series, v, err)
			}
			return n
		}
	}
	t.Fatalf("%s/metrics has no %s", apiURL, series)
	return 0
}

// oneRequestApp is app closing each connection after one answer: every request through the
// edge then opens a visitor stream of its own, which the replicas count.
func oneRequestApp(t *testing.T, name string) string {
	t.Helper()
	l := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s %s", name, r.Method, r.URL.Path)
	})}
	srv.SetKeepAlivesEnabled(false)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// replicasHeld are the replicas on which the agent holds a ready session.
func replicasHeld(s agentclient.State) []string {
	var out []string
	for _, c := range s.Connections {
		if c.Ready {
			out = append(out, c.Replica)
		}
	}
	slices.Sort(out)
	return out
}

// TestAgentOnEveryReplica: an agent with two connections, pointed at replica A, holds a
// session on A and one on B (listed by the API, binding the same hostname); each replica
// serves the agent's endpoint without forwarding a request. B dies: traffic through A goes
// on without one failure, and the agent holds a session on B again once B is back.
func TestAgentOnEveryReplica(t *testing.T) {
	dsn := pgcluster.Database(t)
	lnA := listen(t)
	a := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, apiservertest.NoRateLimit, linked(lnA), quickLeases, func(o *apiserver.Options) { o.Agents.Advertise = o.BaseURL })
	a.ServeCluster(t, lnA)
	keys := a.Keys(t)
	b := startAgentReplica(t, a, dsn, keys, "127.0.0.1:0")
	viaA := newEnvOnStore(t, a, a.Store, a.EdgeTunnels())
	viaB := newEnvOnStore(t, a, b.st, b.srv.EdgeTunnels())
	viaB.ca = viaA.ca

	const host = "multi.example.test"
	viaA.domain(host)
	token := viaA.api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)
	core, logs := observer.New(zapcore.InfoLevel)
	defer func() {
		if t.Failed() {
			for _, l := range logs.All() {
				t.Log("agent:", l.Message, l.ContextMap())
			}
		}
	}()
	agent := a.StartAgent(t, agentclient.Config{
		Authtoken: token, Connections: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Logger: zap.New(core),
		Tunnels: []agentclient.TunnelConfig{{Proto: "https", Hostname: host, ForwardsTo: "http://" + oneRequestApp(t, "multi")}},
	})
	want := []string{a.Plane.Replica(), b.srv.AgentPlane().Replica()}
	slices.Sort(want)
	agent.WaitFor(t, "a session on A and one on B", func(s agentclient.State) bool { return slices.Equal(replicasHeld(s), want) })
	if n := len(viaA.api("GET", "/tunnel_sessions", nil)["tunnel_sessions"].([]any)); n != 2 {
		t.Fatalf("the API lists %d sessions, want the agent's two", n)
	}
	if n := len(viaA.api("GET", "/tunnels", nil)["tunnels"].([]any)); n != 2 {
		t.Fatalf("the API lists %d tunnels, want one on each session", n)
	}

	url := "https://" + host + "/"
	for _, via := range []*env{viaA, viaB} {
		waitFor(t, "the replica's edge serves the agent's endpoint", func() bool { return strings.HasPrefix(via.tryGet(url), "multi GET /") })
	}
	// Each replica opens every stream to its own session: none is forwarded to the other.
	openedA, openedB := streamsOpened(t, a.URL), streamsOpened(t, b.url)
	const each = 5
	for _, via := range []*env{viaA, viaB} {
		for range each {
			if body := via.tryGet(url); !strings.HasPrefix(body, "multi GET /") {
				t.Fatalf("GET %s: %q", url, body)
			}
		}
	}
	if gotA, gotB := streamsOpened(t, a.URL)-openedA, streamsOpened(t, b.url)-openedB; gotA != each || gotB != each {
		t.Fatalf("streams opened by A's session %d, by B's %d; want %d each (none forwarded)", gotA, gotB, each)
	}

	// B dies while visitors reach the agent through A: A serves every request from its own
	// session, before, during and after B's death and sweep.
	client := viaA.client()
	var served, failed atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Get(url)
			if err != nil || resp.StatusCode != http.StatusOK {
				failed.Add(1)
				if err == nil {
					resp.Body.Close()
				}
				continue
			}
			resp.Body.Close()
			served.Add(1)
		}
	})
	waitFor(t, "traffic flows through A", func() bool { return served.Load() > 0 })
	deadB := b.srv.AgentPlane().Replica()
	b.kill()
	waitFor(t, "A swept B and stopped listing it", func() bool {
		return !slices.ContainsFunc(a.Plane.Peers(), func(r agentproto.Replica) bool { return r.ID == deadB })
	})
	before := served.Load()
	waitFor(t, "traffic flows through A after B's sweep", func() bool { return served.Load() > before })
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d requests through A failed while B died (%d served)", n, served.Load())
	}

	// B comes back at the same address (a new replica): the agent opens a session there again.
	b2 := startAgentReplica(t, a, dsn, keys, strings.TrimPrefix(b.url, "http://"))
	want = []string{a.Plane.Replica(), b2.srv.AgentPlane().Replica()}
	slices.Sort(want)
	agent.WaitFor(t, "a session on A and one on B again", func(s agentclient.State) bool { return slices.Equal(replicasHeld(s), want) })
	viaB2 := newEnvOnStore(t, a, b2.st, b2.srv.EdgeTunnels())
	viaB2.ca = viaA.ca
	waitFor(t, "B's edge serves the agent's endpoint again", func() bool { return strings.HasPrefix(viaB2.tryGet(url), "multi GET /") })
	openedA, openedB = streamsOpened(t, a.URL), streamsOpened(t, b2.url)
	for range each {
		if body := viaB2.tryGet(url); !strings.HasPrefix(body, "multi GET /") {
			t.Fatalf("GET %s through B: %q", url, body)
		}
	}
	if gotA, gotB := streamsOpened(t, a.URL)-openedA, streamsOpened(t, b2.url)-openedB; gotA != 0 || gotB != each {
		t.Fatalf("streams opened by A's session %d, by B's %d; want 0 and %d (none forwarded)", gotA, gotB, each)
	}
}
