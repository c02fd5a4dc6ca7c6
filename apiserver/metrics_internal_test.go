package apiserver

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// retryingStore runs every write transaction as a database that hit a serialization
// failure would: the first run fails, the second commits. (SQLite never retries.)
type retryingStore struct{ store.Store }

func (retryingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	_ = fn(nil)
	return fn(nil)
}

func TestStoreRetriesCounted(t *testing.T) {
	m := newMetrics()
	s := loggedStore{Store: retryingStore{}, log: zap.NewNop(), metrics: m, outage: newOutage(zap.NewNop(), m.storeDown)}
	runs := 0
	for range 2 {
		if err := s.Write(context.Background(), func(store.Tx) error { runs++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(m.storeRetries); runs != 4 || got != 2 {
		t.Fatalf("runs %d, retries counted %v; want 4 and 2", runs, got)
	}
	if n := testutil.CollectAndCount(m.storeDuration, "warren_store_transaction_duration_seconds"); n != 1 {
		t.Fatalf("duration series: %d, want 1 (op write)", n)
	}
}
