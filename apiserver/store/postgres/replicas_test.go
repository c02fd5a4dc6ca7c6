package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// serveReplicas runs n API servers on the database at dsn, each with its own store (its own
// connection pool) and HTTP listener, all stopped when the test ends; configure sets each
// one's options beyond the store, base URL and bootstrap key. It returns their base URLs,
// the bootstrap key's token and their stores.
func serveReplicas(t *testing.T, dsn string, n int, configure func(*apiserver.Options)) (urls []string, token string, stores []*Store) {
	t.Helper()
	token = ids.NewToken(ids.New(ids.APIKey))
	for range n {
		db, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		var handler http.Handler
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
		opts := apiserver.Options{Store: db, BaseURL: ts.URL, BootstrapAPIKey: token}
		if configure != nil {
			configure(&opts)
		}
		srv, err := apiserver.New(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		handler = srv
		t.Cleanup(func() { ts.Close(); srv.Close(); db.Close() })
		urls = append(urls, ts.URL)
		stores = append(stores, db)
	}
	return urls, token, stores
}

// TestReplicasDeliverEachEventOnce runs two servers on one PostgreSQL database, each with its
// delivery worker, and makes changes through both: the target receives every event once, in
// the order of the changes.
func TestReplicasDeliverEachEventOnce(t *testing.T) {
	dsn := freshDatabase(t)
	fake := deliverytest.NewAWS(t)
	fake.AddKey("AKIAREPLICAS", "replica-secret")
	urls, token, _ := serveReplicas(t, dsn, 2, func(o *apiserver.Options) {
		o.Events = apiserver.EventOptions{Sender: delivery.New(delivery.Options{Endpoints: fake.Endpoints()}), PollInterval: 10 * time.Millisecond}
	})
	call := func(base, path string, body any) string {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ ID string }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
		}
		return out.ID
	}
	dest := call(urls[0], "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{
		"auth":       map[string]any{"creds": map[string]any{"access_key_id": "AKIAREPLICAS", "secret_access_key": "replica-secret"}},
		"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}})
	call(urls[1], "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []any{dest}})

	const n = 20
	var want []string
	for i := range n {
		want = append(want, call(urls[i%2], "/ip_policies", map[string]any{}))
	}
	var got []string
	for _, raw := range fake.Kinesis.WaitFor(t, n) {
		var ev struct{ Object struct{ ID string } }
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Object.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v,\nwant each policy once in creation order %v", got, want)
	}
}
