package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// The outbox half of the contract (store.Outbox and Tx.AddEvent).

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// addEvent writes an event of acct at t0+offset with deliveries to destinations.
func addEvent(t *testing.T, s store.Store, id string, offset time.Duration, destinations ...string) *store.Event {
	t.Helper()
	e := &store.Event{ID: id, AccountID: acct, Type: "ip_policy_created.v0", Time: t0.Add(offset), Payload: []byte(`{"event_id":"` + id + `"}`)}
	var ds []store.NewDelivery
	for _, d := range destinations {
		ds = append(ds, store.NewDelivery{ID: "dl_" + id + "_" + d, DestinationID: d})
	}
	write(t, s, func(tx store.Tx) error { return tx.AddEvent(t.Context(), e, ds) })
	return e
}

func claim(t *testing.T, s store.Store, holder string, now time.Time) []*store.Delivery {
	t.Helper()
	ds, err := s.Claim(t.Context(), holder, now, time.Minute, 10)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return ds
}

func finish(t *testing.T, s store.Store, holder string, now time.Time, state string, next time.Time, ds ...*store.Delivery) {
	t.Helper()
	var outcomes []store.Outcome
	for _, d := range ds {
		outcomes = append(outcomes, store.Outcome{Seq: d.Seq, State: state, NextAttempt: next, Error: map[bool]string{true: "", false: "boom"}[state == store.DeliveryDelivered]})
	}
	if err := s.Finish(t.Context(), holder, now, outcomes); err != nil {
		t.Fatalf("Finish: %v", err)
	}
}

func eventIDs(ds []*store.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.EventID)
	}
	return out
}

func checkClaimed(t *testing.T, what string, ds []*store.Delivery, destination string, events ...string) {
	t.Helper()
	if got := eventIDs(ds); !slices.Equal(got, events) {
		t.Fatalf("%s: claimed events %v, want %v", what, got, events)
	}
	for _, d := range ds {
		if d.DestinationID != destination || d.Event == nil || d.Event.ID != d.EventID || d.Event.Type != "ip_policy_created.v0" ||
			string(d.Event.Payload) != `{"event_id":"`+d.EventID+`"}` || d.State != store.DeliveryPending {
			t.Fatalf("%s: claimed %+v (event %+v), want a pending delivery to %s with its event", what, d, d.Event, destination)
		}
	}
}

// testOutboxAtomic: an event is written with the transaction's other changes, or not at all.
func testOutboxAtomic(t *testing.T, s store.Store) {
	boom := errors.New("boom")
	err := s.Write(t.Context(), func(tx store.Tx) error {
		if err := tx.Insert(t.Context(), obj("t_0001")); err != nil {
			return err
		}
		e := &store.Event{ID: "ev_1", AccountID: acct, Type: "x.v0", Time: t0, Payload: []byte("{}")}
		if err := tx.AddEvent(t.Context(), e, []store.NewDelivery{{ID: "dl_1", DestinationID: "ed_1"}}); err != nil {
			return err
		}
		return boom
	})
	checkIs(t, "rolled-back write", err, boom)
	if evs, _ := s.Events(t.Context(), store.OutboxQuery{}); len(evs) != 0 {
		t.Fatalf("a rolled-back transaction left events %v", evs)
	}
	if ds := claim(t, s, "h1", t0.Add(time.Hour)); ds != nil {
		t.Fatalf("a rolled-back transaction left deliveries %v", eventIDs(ds))
	}
	e := addEvent(t, s, "ev_2", 0, "ed_1")
	if e.Seq == 0 {
		t.Fatal("AddEvent did not set Seq")
	}
	evs, err := s.Events(t.Context(), store.OutboxQuery{})
	if err != nil || len(evs) != 1 || evs[0].ID != "ev_2" || !evs[0].Time.Equal(t0) || string(evs[0].Payload) != string(e.Payload) || evs[0].Seq != e.Seq {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
}

// testOutboxClaimOrder: deliveries go out per destination, oldest first, one holder at a
// time, waiting for a retry that is not due yet.
func testOutboxClaimOrder(t *testing.T, s store.Store) {
	addEvent(t, s, "ev_1", 0, "ed_a", "ed_b")
	addEvent(t, s, "ev_2", time.Second, "ed_a")
	addEvent(t, s, "ev_3", 2*time.Second, "ed_b", "ed_a")
	now := t0.Add(time.Minute)

	a := claim(t, s, "h1", now)
	checkClaimed(t, "first claim", a, "ed_a", "ev_1", "ev_2", "ev_3")
	b := claim(t, s, "h2", now)
	checkClaimed(t, "second claim", b, "ed_b", "ev_1", "ev_3")
	if ds := claim(t, s, "h3", now); ds != nil {
		t.Fatalf("both destinations are leased, yet %v was claimed", eventIDs(ds))
	}

	// ed_a fails and retries in ten seconds; nothing of it is due before then.
	finish(t, s, "h1", now, store.DeliveryPending, now.Add(10*time.Second), a...)
	finish(t, s, "h2", now, store.DeliveryDelivered, time.Time{}, b...)
	if ds := claim(t, s, "h1", now.Add(5*time.Second)); ds != nil {
		t.Fatalf("claimed %v before the retry was due", eventIDs(ds))
	}
	// A new event behind a waiting head waits with it.
	addEvent(t, s, "ev_4", 3*time.Second, "ed_a")
	if ds := claim(t, s, "h1", now.Add(5*time.Second)); ds != nil {
		t.Fatalf("claimed %v past the destination's waiting head", eventIDs(ds))
	}
	again := claim(t, s, "h2", now.Add(10*time.Second))
	checkClaimed(t, "retry", again, "ed_a", "ev_1", "ev_2", "ev_3", "ev_4")
	if again[0].Attempts != 1 || again[0].LastError != "boom" || again[3].Attempts != 0 {
		t.Fatalf("retry: attempts %d and %d, last error %q", again[0].Attempts, again[3].Attempts, again[0].LastError)
	}
	// The head gives up; the rest is delivered.
	finish(t, s, "h2", now.Add(10*time.Second), store.DeliveryFailed, time.Time{}, again[0])
	finish(t, s, "h2", now.Add(10*time.Second), store.DeliveryDelivered, time.Time{}, again[1:]...)
	if ds := claim(t, s, "h1", now.Add(time.Hour)); ds != nil {
		t.Fatalf("claimed %v with nothing pending", eventIDs(ds))
	}
	failed, err := s.Deliveries(t.Context(), store.OutboxQuery{State: store.DeliveryFailed})
	if err != nil || len(failed) != 1 || failed[0].EventID != "ev_1" || failed[0].DestinationID != "ed_a" || failed[0].Attempts != 2 || failed[0].LastError != "boom" {
		t.Fatalf("failed deliveries = %+v, %v", failed, err)
	}
}

// testOutboxLease: a lease that runs out is taken over, and the old holder's outcome no
// longer counts.
func testOutboxLease(t *testing.T, s store.Store) {
	addEvent(t, s, "ev_1", 0, "ed_a")
	first := claim(t, s, "dead", t0)
	checkClaimed(t, "first claim", first, "ed_a", "ev_1")
	if ds := claim(t, s, "h2", t0.Add(59*time.Second)); ds != nil {
		t.Fatalf("claimed %v under a running lease", eventIDs(ds))
	}
	taken := claim(t, s, "h2", t0.Add(time.Minute))
	checkClaimed(t, "after the lease", taken, "ed_a", "ev_1")
	finish(t, s, "dead", t0.Add(time.Minute), store.DeliveryFailed, time.Time{}, first...)
	ds, err := s.Deliveries(t.Context(), store.OutboxQuery{})
	if err != nil || len(ds) != 1 || ds[0].State != store.DeliveryPending {
		t.Fatalf("the old holder's outcome was recorded: %+v, %v", ds, err)
	}
	finish(t, s, "h2", t0.Add(time.Minute), store.DeliveryDelivered, time.Time{}, taken...)
	ds, err = s.Deliveries(t.Context(), store.OutboxQuery{})
	if err != nil || len(ds) != 1 || ds[0].State != store.DeliveryDelivered || ds[0].Attempts != 1 || ds[0].LastError != "" {
		t.Fatalf("after delivery: %+v, %v", ds, err)
	}
}

// testOutboxQueries: operators' lists, newest first, filtered and paged.
func testOutboxQueries(t *testing.T, s store.Store) {
	for i := 1; i <= 5; i++ {
		addEvent(t, s, fmt.Sprintf("ev_%d", i), time.Duration(i)*time.Second, "ed_a", "ed_b")
	}
	other := &store.Event{ID: "ev_x", AccountID: acct2, Type: "x.v0", Time: t0, Payload: []byte("{}")}
	write(t, s, func(tx store.Tx) error { return tx.AddEvent(t.Context(), other, nil) })

	evs, err := s.Events(t.Context(), store.OutboxQuery{AccountID: acct, Limit: 2})
	if err != nil || len(evs) != 2 || evs[0].ID != "ev_5" || evs[1].ID != "ev_4" {
		t.Fatalf("first page of events: %+v, %v", evs, err)
	}
	evs, err = s.Events(t.Context(), store.OutboxQuery{AccountID: acct, BeforeID: "ev_4"})
	if err != nil || len(evs) != 3 || evs[0].ID != "ev_3" || evs[2].ID != "ev_1" {
		t.Fatalf("events before ev_4: %+v, %v", evs, err)
	}
	if evs, _ := s.Events(t.Context(), store.OutboxQuery{}); len(evs) != 6 || evs[0].ID != "ev_x" {
		t.Fatalf("all events: %d, newest %s", len(evs), evs[0].ID)
	}
	ds, err := s.Deliveries(t.Context(), store.OutboxQuery{DestinationID: "ed_b", Limit: 3})
	if err != nil || !slices.Equal(eventIDs(ds), []string{"ev_5", "ev_4", "ev_3"}) {
		t.Fatalf("deliveries to ed_b: %v, %v", eventIDs(ds), err)
	}
	ds, err = s.Deliveries(t.Context(), store.OutboxQuery{DestinationID: "ed_b", BeforeID: ds[2].ID})
	if err != nil || !slices.Equal(eventIDs(ds), []string{"ev_2", "ev_1"}) {
		t.Fatalf("next page: %v, %v", eventIDs(ds), err)
	}
	ds, err = s.Deliveries(t.Context(), store.OutboxQuery{EventID: "ev_3", State: store.DeliveryPending})
	if err != nil || len(ds) != 2 || ds[0].NextAttempt.IsZero() || !ds[0].CreatedAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("deliveries of ev_3: %+v, %v", ds, err)
	}
}

// testOutboxPending: the outbox's depth counts pending deliveries of every account, and
// drops as they are delivered; the oldest pending one's creation time follows.
func testOutboxPending(t *testing.T, s store.Store) {
	var oldest time.Time
	pending := func() int64 {
		t.Helper()
		n, o, err := s.Pending(t.Context())
		if err != nil {
			t.Fatalf("Pending: %v", err)
		}
		oldest = o
		return n
	}
	if n := pending(); n != 0 || !oldest.IsZero() {
		t.Fatalf("empty outbox: %d pending, oldest %v", n, oldest)
	}
	addEvent(t, s, "ev_1", 0, "ed_a", "ed_b")
	addEvent(t, s, "ev_2", time.Second, "ed_a")
	addEvent(t, s, "ev_3", 2*time.Second) // no subscriber, no delivery
	if n := pending(); n != 3 || !oldest.Equal(t0) {
		t.Fatalf("after three deliveries: %d pending, oldest %v, want %v", n, oldest, t0)
	}
	ds := claim(t, s, "h", t0.Add(time.Hour))
	finish(t, s, "h", t0.Add(time.Hour), store.DeliveryDelivered, time.Time{}, ds...)
	if n := pending(); n != int64(3-len(ds)) || len(ds) == 0 {
		t.Fatalf("after delivering %d: %d pending", len(ds), n)
	}
	ds = claim(t, s, "h", t0.Add(time.Hour))
	finish(t, s, "h", t0.Add(time.Hour), store.DeliveryDelivered, time.Time{}, ds...)
	if n := pending(); n != 0 || !oldest.IsZero() {
		t.Fatalf("all delivered: %d pending, oldest %v", n, oldest)
	}
}

// testOutboxPrune: old events go with their deliveries once none is pending.
func testOutboxPrune(t *testing.T, s store.Store) {
	addEvent(t, s, "ev_1", 0, "ed_a")
	addEvent(t, s, "ev_2", time.Second, "ed_b")
	addEvent(t, s, "ev_3", time.Hour, "ed_a")
	addEvent(t, s, "ev_4", 2*time.Second) // no subscriber
	ds := claim(t, s, "h", t0.Add(2*time.Hour))
	finish(t, s, "h", t0.Add(2*time.Hour), store.DeliveryDelivered, time.Time{}, ds...) // ev_1, ev_3 to ed_a
	n, err := s.Prune(t.Context(), t0.Add(time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want ev_1 and ev_4", n, err)
	}
	evs, _ := s.Events(t.Context(), store.OutboxQuery{})
	var left []string
	for _, e := range evs {
		left = append(left, e.ID)
	}
	if !slices.Equal(left, []string{"ev_3", "ev_2"}) {
		t.Fatalf("events left %v; want ev_3 (recent) and ev_2 (pending)", left)
	}
	rest, _ := s.Deliveries(t.Context(), store.OutboxQuery{})
	if !slices.Equal(eventIDs(rest), []string{"ev_3", "ev_2"}) {
		t.Fatalf("deliveries left %v", eventIDs(rest))
	}
}

// testOutboxConcurrentClaims: workers claiming side by side deliver everything exactly once
// (none fails here), each destination's events in order.
func testOutboxConcurrentClaims(t *testing.T, s store.Store) {
	const destinations, events, workers = 4, 15, 4
	var all []string
	for i := range destinations {
		all = append(all, fmt.Sprintf("ed_%d", i))
	}
	for i := range events {
		addEvent(t, s, fmt.Sprintf("ev_%03d", i), time.Duration(i)*time.Millisecond, all...)
	}
	var mu sync.Mutex
	seen := map[string][]string{} // destination → events, in delivery order
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			holder := fmt.Sprintf("w%d", w)
			for {
				ds, err := s.Claim(t.Context(), holder, t0.Add(time.Minute), time.Minute, 4)
				if err != nil {
					t.Errorf("Claim: %v", err)
					return
				}
				if ds == nil {
					return
				}
				mu.Lock()
				for _, d := range ds {
					seen[d.DestinationID] = append(seen[d.DestinationID], d.EventID)
				}
				mu.Unlock()
				var outcomes []store.Outcome
				for _, d := range ds {
					outcomes = append(outcomes, store.Outcome{Seq: d.Seq, State: store.DeliveryDelivered})
				}
				if err := s.Finish(t.Context(), holder, t0.Add(time.Minute), outcomes); err != nil {
					t.Errorf("Finish: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, d := range all {
		got := seen[d]
		if len(got) != events || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != events {
			t.Errorf("%s received %v; want each of the %d events once, in order", d, got, events)
		}
	}
}
