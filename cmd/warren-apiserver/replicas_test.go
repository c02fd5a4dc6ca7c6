package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// replica is a server process of a cluster: its API, HTTPS edge and cluster link listen on
// loopback ports of their own.
type replica struct {
	*serverProcess
	name string
	edge string // the HTTPS edge listener's address

	// expect is what the replica's visitors accept now (an expectation); served counts the
	// app's answers through it, refused the edge's 502 and 503.
	expect          atomic.Int32
	served, refused atomic.Int64
}

// What a visitor of a replica accepts, from the strictest: every request served by the app;
// the app or the edge's 502 or 503 (a tunnel whose holder is gone); anything (the replica is
// being killed).
const (
	expectServed int32 = iota
	expectEdgeAnswer
	expectAnything
)

// replicaTimeout bounds each visitor request: an answer that does not come in time is a hang.
const replicaTimeout = 5 * time.Second

func startReplica(t *testing.T, name string, env map[string]string) *replica {
	t.Helper()
	r := &replica{serverProcess: startProcess(t, env), name: name}
	for _, line := range logLines(t, r.stderr.String()) { // logged before "listening"
		if addr, ok := line["https"].(string); ok && line["msg"] == "edge listening" {
			r.edge = addr
		}
	}
	if r.edge == "" {
		t.Fatalf("replica %s: no HTTPS edge listener: %s", name, r.stderr.String())
	}
	return r
}

// visit sends GET https://host/ through the replica's edge, with tlsConfig, and returns the
// status, the Warren error code and the body; err is the client's, its timeout included.
func (r *replica) visit(ctx context.Context, host string, tlsConfig *tls.Config) (status int, code, body string, err error) {
	client := &http.Client{Timeout: replicaTimeout, Transport: &http.Transport{
		DisableKeepAlives: true, // a connection per request: nothing outlives a kill
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, r.edge)
		},
		TLSClientConfig: tlsConfig,
	}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+host+"/", nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Warren-Error-Code"), string(data), err
}

// TestReplicasKill9: three server processes on one PostgreSQL database, each with its own
// API, HTTPS edge and cluster link, and an agent on the first (a real agent client, which
// reaches the replicas as through a load balancer: the first one that is up). Traffic
// through each replica reaches the agent's app. While clients send requests through all
// three, the third, which holds no agent, is killed with SIGKILL: every request through
// the other two is still served. Then the holder is killed: every request through the
// second gets an answer, the app's or the edge's 502 or 503 (never a client timeout), and
// once the agent has reconnected to the second, the app's again.
func TestReplicasKill9(t *testing.T) {
	token := ids.NewToken(ids.New(ids.APIKey))
	env := map[string]string{
		"WARREN_DATABASE": pgcluster.DatabaseURL(t), "WARREN_SECRET_KEY": testKey,
		"WARREN_BOOTSTRAP_API_KEY": token, "WARREN_RATE_LIMIT": "0",
		"WARREN_LISTEN": "127.0.0.1:0", "WARREN_EDGE_HTTPS_LISTEN": "127.0.0.1:0", "WARREN_CLUSTER_LISTEN": "127.0.0.1:0",
	}
	var replicas []*replica
	for _, name := range []string{"first", "second", "third"} { // in turn: the first bootstraps the database
		replicas = append(replicas, startReplica(t, name, env))
	}
	first, second, third := replicas[0], replicas[1], replicas[2]

	api := func(method, path string, body any) map[string]any {
		t.Helper()
		status, out, err := apiCall("http://"+first.addr, token, method, path, body)
		if err != nil || status >= 300 {
			t.Fatalf("%s %s: %d %v %v", method, path, status, out, err)
		}
		return out
	}
	const host = "replicas.example.test"
	ca := newTestCA(t)
	certPEM, keyPEM := ca.issue(t, host)
	cert := api("POST", "/tls_certificates", map[string]any{"certificate_pem": string(certPEM), "private_key_pem": string(keyPEM)})["id"]
	api("POST", "/reserved_domains", map[string]any{"domain": host, "certificate_id": cert})
	web := map[string]string{"app": "web"}
	backend := api("POST", "/backends/tunnel_group", map[string]any{"labels": web})["id"]
	edge := api("POST", "/edges/https", map[string]any{"hostports": []string{host + ":443"}})["id"].(string)
	api("POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", "backend": map[string]any{"backend_id": backend}})
	credential := api("POST", "/credentials", map[string]any{"acl": []string{}})["token"].(string)

	appLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "the app") })}
	go func() { _ = app.Serve(appLn) }()
	t.Cleanup(func() { app.Close() })

	// The load balancer in front of the replicas' APIs: each connection to the first that is up.
	balancer := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for _, r := range replicas {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, r.addr)
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}}
	agent, err := agentclient.New(agentclient.Config{
		ServerURL: "http://" + first.addr, Authtoken: credential, HTTPClient: &http.Client{Transport: balancer},
		Tunnels:    []agentclient.TunnelConfig{{Proto: "http", Labels: web, ForwardsTo: "http://" + appLn.Addr().String()}},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	agentCtx, stopAgent := context.WithCancel(context.Background())
	agentDone := make(chan struct{})
	go func() { defer close(agentDone); _ = agent.Run(agentCtx) }()
	t.Cleanup(func() { stopAgent(); <-agentDone })
	waitAgent := func(what string, cond func(agentclient.State) bool) agentclient.State {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		st, err := agent.Wait(ctx, cond)
		if err != nil {
			t.Fatalf("waiting until %s: %v (agent state %+v)", what, err, agent.State())
		}
		return st
	}
	held := waitAgent("the agent is bound on the first replica", func(s agentclient.State) bool { return s.Ready })
	if len(held.Refused) > 0 {
		t.Fatalf("binds refused: %+v", held.Refused)
	}

	roots := &tls.Config{RootCAs: ca.pool}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(guard); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting until %s", what)
			}
		}
	}
	for _, r := range replicas {
		waitFor("the "+r.name+" replica serves the app", func() bool {
			status, _, body, err := r.visit(t.Context(), host, roots)
			return err == nil && status == http.StatusOK && body == "the app"
		})
	}

	// Clients send requests through every replica until the test ends, each answer checked
	// against what its replica's visitors accept, before the request or after it,
	// whichever is more lenient (the test changes it before it kills).
	ctx, stopClients := context.WithCancel(context.Background())
	var clients sync.WaitGroup
	t.Cleanup(func() { stopClients(); clients.Wait() })
	for _, r := range replicas {
		for range 2 {
			clients.Go(func() {
				for ctx.Err() == nil {
					before := r.expect.Load()
					status, code, body, err := r.visit(ctx, host, roots)
					expect := max(before, r.expect.Load())
					if ctx.Err() != nil || expect == expectAnything {
						continue
					}
					switch {
					case err == nil && status == http.StatusOK && body == "the app":
						r.served.Add(1)
						continue
					case err == nil && expect == expectEdgeAnswer && (status == http.StatusBadGateway || status == http.StatusServiceUnavailable) && code != "":
						r.refused.Add(1)
						continue
					}
					t.Errorf("through the %s replica: %d %s %q %v", r.name, status, code, body, err)
					return
				}
			})
		}
	}
	// serves waits until the replica has served n more requests.
	serves := func(r *replica, n int64, when string) {
		t.Helper()
		from := r.served.Load()
		waitFor(fmt.Sprintf("the %s replica serves %d requests %s", r.name, n, when), func() bool { return r.served.Load() >= from+n })
	}
	for _, r := range replicas {
		serves(r, 5, "under load")
	}

	third.expect.Store(expectAnything)
	third.kill9(t)
	serves(first, 10, "once the third is killed")
	serves(second, 10, "once the third is killed")

	second.expect.Store(expectEdgeAnswer)
	first.expect.Store(expectAnything)
	first.kill9(t)
	moved := waitAgent("the agent is bound on the second replica", func(s agentclient.State) bool {
		return s.Ready && s.SessionID != held.SessionID
	})
	if len(moved.Refused) > 0 {
		t.Fatalf("binds refused on the second replica: %+v", moved.Refused)
	}
	serves(second, 10, "once the agent is back")
	if t.Failed() {
		return
	}
	t.Logf("the second replica answered %d requests with 502 or 503 until the agent was back", second.refused.Load())
	// Its tunnel is the second's own now: every request is served.
	second.expect.Store(expectServed)
	serves(second, 10, "from the agent's own tunnel")
}
