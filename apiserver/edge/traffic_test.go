package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// What an HTTPS edge serves is counted by edge and route, written by the replica, and read
// through GET /edges/https/{id}/traffic and the route's …/routes/{id}/traffic; only the
// edge's account reads it.
func TestTrafficOverTime(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.NoRateLimit, belowEphemeralPorts)
	e := newEnvOn(t, srv, func(o *edge.Options) { o.Traffic = srv.TrafficRecorder() })
	ok := e.create("/backends/http_response", map[string]any{"status_code": 200, "body": "ok"})
	down := e.create("/backends/http_response", map[string]any{"status_code": 503, "body": "down"})
	edgeID, rootID := e.httpsEdge("traffic.example.test", ok, nil)
	downID := e.create("/edges/https/"+edgeID+"/routes", map[string]any{"match_type": "path_prefix", "match": "/down", "backend": map[string]any{"backend_id": down}})
	otherEdge, _ := e.httpsEdge("quiet.example.test", ok, nil)

	c := e.client()
	for _, path := range []string{"/", "/a", "/b", "/down"} {
		e.get(c, "https://traffic.example.test"+path)
	}
	srv.FlushTraffic(t)

	var all, route, quiet api.Traffic
	getTraffic(t, srv, srv.APIKey, "/edges/https/"+edgeID+"/traffic", 200, &all)
	getTraffic(t, srv, srv.APIKey, "/edges/https/"+edgeID+"/routes/"+downID+"/traffic", 200, &route)
	getTraffic(t, srv, srv.APIKey, "/edges/https/"+otherEdge+"/traffic", 200, &quiet)
	if len(all.Buckets) != 60 || all.EdgeID != edgeID || all.RouteID != "" {
		t.Fatalf("edge traffic: %d buckets of %s/%s", len(all.Buckets), all.EdgeID, all.RouteID)
	}
	if got := all.Buckets[59]; got.Requests != 4 || got.Status != (api.TrafficStatus{S2xx: 3, S5xx: 1}) || got.LatencyMS == nil || got.BytesOut == 0 {
		t.Fatalf("the edge's last minute: %+v, want 3 2xx and 1 5xx", got)
	}
	if got := route.Buckets[59]; route.RouteID != downID || got.Requests != 1 || got.Status.S5xx != 1 {
		t.Fatalf("the route's last minute: %+v, want its one 5xx", got)
	}
	if quiet.Buckets[59].Requests != 0 {
		t.Fatalf("an edge without traffic counted %d", quiet.Buckets[59].Requests)
	}

	other := srv.NewAccount(t)
	getTraffic(t, srv, other, "/edges/https/"+edgeID+"/traffic", 404, nil)
	getTraffic(t, srv, srv.APIKey, "/edges/https/"+otherEdge+"/routes/"+rootID+"/traffic", 404, nil)
	getTraffic(t, srv, srv.APIKey, "/edges/tcp/"+edgeID+"/traffic", 400, nil)
}

func getTraffic(t *testing.T, srv *apiservertest.Server, token, path string, status int, out *api.Traffic) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %d %s, want %d", path, resp.StatusCode, body, status)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatal(err)
		}
	}
}

// Two replicas of one PostgreSQL database each serve part of an edge's traffic; either
// replica's API answers the sum. Replica B's minutes are written when it closes.
func TestTrafficAcrossReplicas(t *testing.T) {
	dsn := pgcluster.Database(t)
	a := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		return postgres.Open(ctx, dsn, seal)
	}, apiservertest.NoRateLimit, belowEphemeralPorts)
	keys := a.Keys(t)
	st, err := postgres.Open(t.Context(), dsn, sqlstore.WithKeys(keys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts := apiserver.Options{Store: st, BaseURL: a.URL, Events: apiserver.EventOptions{Workers: -1}}
	apiservertest.NoRateLimit(&opts)
	b, err := apiserver.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = b.Close()
		}
	})

	envA := newEnvOn(t, a, func(o *edge.Options) { o.Traffic = a.TrafficRecorder() })
	envB := newEnvOnStore(t, a, st, b.EdgeTunnels(), func(o *edge.Options) { o.Traffic = b.TrafficRecorder() })
	envB.ca = envA.ca
	ok := envA.create("/backends/http_response", map[string]any{"status_code": 200, "body": "ok"})
	edgeID, _ := envA.httpsEdge("replicas.example.test", ok, nil)
	served, sent := 0, 0 // by B: requests to a host B does not know yet are not an edge's traffic
	apiservertest.WaitUntil(t, "replica B serves the edge", func() bool {
		sent++
		resp, err := envB.client().Get("https://replicas.example.test/") // fails while B has no certificate for it
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			served++
		}
		return resp.StatusCode == 200
	})
	for range 2 {
		envA.get(envA.client(), "https://replicas.example.test/")
	}
	envB.get(envB.client(), "https://replicas.example.test/")
	served += 3
	sent += 3
	a.FlushTraffic(t)
	closed = true
	if err := b.Close(); err != nil { // writes B's minutes
		t.Fatal(err)
	}

	var got api.Traffic
	getTraffic(t, a, a.APIKey, "/edges/https/"+edgeID+"/traffic", 200, &got)
	var requests, ok2xx int64
	for _, bk := range got.Buckets {
		requests += bk.Requests
		ok2xx += bk.Status.S2xx
	}
	// While B's snapshot catches up, it may answer the edge's host with an error that is
	// the edge's traffic too: every 2xx is counted, and nothing beyond what was sent.
	if ok2xx != int64(served) || requests < ok2xx || requests > int64(sent) {
		t.Fatalf("the edge's hour: %d requests, %d 2xx; want the %d 2xx that A and B served, of %d sent", requests, ok2xx, served, sent)
	}
}
