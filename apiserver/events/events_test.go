package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/aftercommit"
	"github.com/warrenhq/terraform-provider-warren/apiserver/events"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// An event with deliveries must be written in a write of aftercommit.Store, or the worker
// would learn of it only at its next poll: written elsewhere it fails, and changes nothing.
// An event no destination gets needs no wake-up.
func TestAddNeedsAfterCommitHooksForDeliveries(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	opts := events.Options{Workers: -1}
	opts.SetDefaults()
	outbox := events.New(opts, events.Env{Store: db, Now: time.Now, Log: zap.NewNop()})
	add := func(tx store.Tx) error {
		return outbox.Add(ctx, tx, "acc_1", "ip_policy_created.v0", nil, map[string]string{"id": "ipp_1"})
	}

	if err := db.Write(ctx, add); err != nil {
		t.Fatalf("no subscriber: %v", err)
	}
	sub, _ := json.Marshal(api.EventSubscription{Sources: []api.EventSource{{Type: "ip_policy_created.v0"}}, Destinations: []api.Ref{{ID: "ed_1"}}})
	if err := db.Write(ctx, func(tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: kinds.EventSubscription, ID: "esb_1", AccountID: "acc_1", Doc: sub})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, add); !errors.Is(err, aftercommit.ErrNoHooks) {
		t.Fatalf("a subscriber, a bare write: %v, want ErrNoHooks", err)
	}
	if err := (aftercommit.Store{Store: db}).Write(ctx, add); err != nil {
		t.Fatalf("a subscriber, a write of aftercommit.Store: %v", err)
	}
	evs, err := db.Events(ctx, store.OutboxQuery{AccountID: "acc_1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2: the refused one was not written", len(evs))
	}
	ds, err := db.Deliveries(ctx, store.OutboxQuery{AccountID: "acc_1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].DestinationID != "ed_1" || ds[0].EventID != evs[0].ID {
		t.Fatalf("deliveries %+v, want one to ed_1 of the newest event", ds)
	}
}
