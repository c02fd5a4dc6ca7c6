package postgres

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// TestReplicasIdempotencyKey runs two servers on one PostgreSQL database and sends the same
// POST with one Idempotency-Key through both at once, several times: exactly one IP policy
// is created, and every answer is that creation (run or replayed) or 409 while it runs.
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
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a := &answers[i]
			a.status, a.body, a.replayed = post(urls[i%2])
		}()
	}
	close(start)
	wg.Wait()
	var created string
	for _, a := range answers {
		switch a.status {
		case http.StatusCreated:
			if created != "" && a.body != created {
				t.Fatalf("two different creations:\n%s\n%s", created, a.body)
			}
			created = a.body
		case http.StatusConflict:
			if !strings.Contains(a.body, `"error_code":"ERR_215"`) {
				t.Fatalf("409 body %s", a.body)
			}
		default:
			t.Fatalf("status %d: %s", a.status, a.body)
		}
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
