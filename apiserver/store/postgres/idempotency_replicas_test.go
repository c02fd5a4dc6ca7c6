package postgres

import (
	"context"
	"net/http"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// TestReplicasIdempotencyKey runs two servers on one PostgreSQL database and sends the same
// POST with one Idempotency-Key through both at once, several times: exactly one IP policy
// is created, and every other answer is its replay (the record commits with the create, so
// a concurrent request's transaction meets it and replays it rather than answering 409).
func TestReplicasIdempotencyKey(t *testing.T) {
	urls, token, stores := serveReplicas(t, freshDatabase(t), 2, nil)
	db := stores[0]
	const n = 8
	answers := make([]apiservertest.Answer, n)
	apiservertest.AtOnce(n, func(i int) {
		answers[i] = apiservertest.KeyedPOST(urls[i%2], token, "/ip_policies", `{"description":"once"}`, "replicated-key")
	})
	apiservertest.CheckOneCreation(t, answers)
	created := answers[0].Body
	// Once the first has been answered, both replicas replay it.
	for _, base := range urls {
		a := apiservertest.KeyedPOST(base, token, "/ip_policies", `{"description":"once"}`, "replicated-key")
		if a.Status != http.StatusCreated || a.Replayed != "true" || a.Body != created {
			t.Fatalf("replay through %s: %d %q %s", base, a.Status, a.Replayed, a.Body)
		}
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
