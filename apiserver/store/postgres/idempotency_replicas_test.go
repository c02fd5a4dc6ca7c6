package postgres

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// TestReplicasIdempotencyKey runs two servers on one PostgreSQL database and sends the same
// POST with one Idempotency-Key through both at once, several times: exactly one IP policy
// is created, and every other answer is its replay (the record commits with the create, so
// a concurrent request's transaction meets it and replays it rather than answering 409).
func TestReplicasIdempotencyKey(t *testing.T) {
	dsn := freshDatabase(t)
	token := ids.NewToken(ids.New(ids.APIKey))
	var urls []string
	var db store.Store
	for range 2 {
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		db = s
		var handler http.Handler
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
		srv, err := apiserver.New(context.Background(), apiserver.Options{Store: s, BaseURL: ts.URL, BootstrapAPIKey: token})
		if err != nil {
			t.Fatal(err)
		}
		handler = srv
		t.Cleanup(func() { ts.Close(); srv.Close(); s.Close() })
		urls = append(urls, ts.URL)
	}
	post := func(base string) (int, string, string) {
		req, _ := http.NewRequest("POST", base+"/ip_policies", strings.NewReader(`{"description":"once"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "replicated-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error(), ""
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header.Get("Idempotent-Replayed")
	}
	const n = 8
	type answer struct {
		status         int
		body, replayed string
	}
	answers := make([]answer, n)
	apiservertest.AtOnce(n, func(i int) {
		a := &answers[i]
		a.status, a.body, a.replayed = post(urls[i%2])
	})
	var created string
	replays := 0
	for _, a := range answers {
		if a.status != http.StatusCreated || (created != "" && a.body != created) {
			t.Fatalf("answer %d %s, want 201 %s", a.status, a.body, created)
		}
		created = a.body
		if a.replayed == "true" {
			replays++
		}
	}
	if replays != n-1 {
		t.Fatalf("%d replays of %d answers, want all but one", replays, n)
	}
	// Once the first has been answered, both replicas replay it.
	for _, base := range urls {
		status, body, replayed := post(base)
		if status != http.StatusCreated || replayed != "true" || (created != "" && body != created) {
			t.Fatalf("replay through %s: %d %q %s", base, status, replayed, body)
		}
		created = body
	}
	var policies int
	err := db.Read(context.Background(), func(tx store.Tx) error {
		account, err := tx.Lookup(context.Background(), apiserver.BootstrapAccountKey)
		if err != nil {
			return err
		}
		policies, err = tx.Count(context.Background(), "ip_policy", account.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if policies != 1 {
		t.Fatalf("%d IP policies, want 1", policies)
	}
}
