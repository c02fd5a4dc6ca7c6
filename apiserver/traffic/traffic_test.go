package traffic

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// onEachStore runs test on a SQLite store and a PostgreSQL one.
func onEachStore(t *testing.T, test func(t *testing.T, s *sqlstore.Store)) {
	open := func(t *testing.T, s *sqlstore.Store, err error) *sqlstore.Store {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"))
		test(t, open(t, s, err))
	})
	t.Run("postgres", func(t *testing.T) {
		s, err := postgres.Open(t.Context(), pgcluster.Database(t))
		test(t, open(t, s, err))
	})
}

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }
func read(t *testing.T, st store.Store, edge, route string, now time.Time) *api.Traffic {
	t.Helper()
	var out *api.Traffic
	err := st.Read(t.Context(), func(tx store.Tx) (err error) {
		out, err = Read(t.Context(), tx, "acct_1", edge, route, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Two replicas count the same edge; a read sums their rows minute by minute, for the edge
// and for one route, and a minute rewritten by a later flush is not counted twice.
func TestReplicasSum(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *sqlstore.Store) {
		c := &clock{now: time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)}
		a, b := NewRecorder("a", c.Now), NewRecorder("b", c.Now)
		a.Request("acct_1", "edghts_1", "edghtsrt_1", 200, 2*time.Millisecond, 10, 100)
		a.Request("acct_1", "edghts_1", "edghtsrt_1", 503, 20*time.Millisecond, 10, 50)
		b.Request("acct_1", "edghts_1", "edghtsrt_2", 404, 200*time.Millisecond, 5, 5)
		b.Request("acct_2", "edghts_9", "", 200, time.Millisecond, 1, 1) // another account's edge
		for _, r := range []*Recorder{a, b} {
			if err := r.Flush(t.Context(), st); err != nil {
				t.Fatal(err)
			}
		}
		a.Request("acct_1", "edghts_1", "edghtsrt_1", 201, 2*time.Millisecond, 10, 100) // same minute, flushed again
		if err := a.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Minute)
		b.Request("acct_1", "edghts_1", "edghtsrt_2", 200, 3*time.Second, 0, 0)
		if err := b.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}

		all := read(t, st, "edghts_1", "", c.Now())
		if len(all.Buckets) != 60 || all.BucketSeconds != 60 {
			t.Fatalf("%d buckets of %d s, want 60 of 60", len(all.Buckets), all.BucketSeconds)
		}
		last, prev := all.Buckets[59], all.Buckets[58]
		if last.Start != "2026-11-26T12:01:00Z" || prev.Start != "2026-11-26T12:00:00Z" || all.Buckets[0].Start != "2026-11-26T11:02:00Z" {
			t.Fatalf("bucket starts %s, %s … %s", all.Buckets[0].Start, prev.Start, last.Start)
		}
		wantPrev := api.TrafficStatus{S2xx: 2, S4xx: 1, S5xx: 1}
		if prev.Requests != 4 || prev.Status != wantPrev || prev.BytesIn != 35 || prev.BytesOut != 255 {
			t.Fatalf("12:00 = %+v, want 4 requests %+v, 35 bytes in, 255 out", prev, wantPrev)
		}
		// 2 ms, 2 ms, 20 ms, 200 ms: the median falls in (1 ms, 2.5 ms].
		if l := prev.LatencyMS; l == nil || l.P50 <= 1 || l.P50 > 2.5 || l.P99 <= 100 || l.P99 > 250 {
			t.Fatalf("12:00 latency %+v, want p50 in (1, 2.5] ms and p99 in (100, 250] ms", l)
		}
		if last.Requests != 1 || last.Status.S2xx != 1 || last.LatencyMS == nil || last.LatencyMS.P50 <= 2500 {
			t.Fatalf("12:01 = %+v %+v, want one 2xx over 2.5 s", last, last.LatencyMS)
		}
		if all.Buckets[0].LatencyMS != nil || all.Buckets[0].Requests != 0 {
			t.Fatalf("an idle minute: %+v", all.Buckets[0])
		}

		route := read(t, st, "edghts_1", "edghtsrt_1", c.Now())
		if got := route.Buckets[58]; got.Requests != 3 || got.Status != (api.TrafficStatus{S2xx: 2, S5xx: 1}) {
			t.Fatalf("route 1 at 12:00 = %+v, want 3 requests", got)
		}
		if route.RouteID != "edghtsrt_1" || route.Buckets[59].Requests != 0 {
			t.Fatalf("route 1 = %+v", route)
		}
	})
}

// Connections of TCP and TLS edges are counted apart from requests.
func TestConnections(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *sqlstore.Store) {
		c := &clock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
		r := NewRecorder("a", c.Now)
		r.Connection("acct_1", "edgtcp_1", 3, 4)
		r.Connection("acct_1", "edgtcp_1", 0, 0)
		if err := r.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		got := read(t, st, "edgtcp_1", "", c.Now()).Buckets[59]
		if got.Connections != 2 || got.Requests != 0 || got.BytesIn != 3 || got.BytesOut != 4 || got.LatencyMS != nil {
			t.Fatalf("%+v, want 2 connections, 3 bytes in, 4 out", got)
		}
	})
}

// Rows that fell out of the window are deleted by the next flush of their edge, whichever
// replica wrote them, and are not read.
func TestWindow(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *sqlstore.Store) {
		c := &clock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
		gone, live := NewRecorder("gone", c.Now), NewRecorder("live", c.Now)
		gone.Request("acct_1", "edghts_1", "", 200, time.Millisecond, 0, 0)
		if err := gone.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		c.Add(Window)
		if got := read(t, st, "edghts_1", "", c.Now()); got.Buckets[0].Requests != 0 {
			t.Fatalf("a minute out of the window read: %+v", got.Buckets[0])
		}
		c.Add(2 * time.Minute)
		live.Request("acct_1", "edghts_1", "", 200, time.Millisecond, 0, 0)
		if err := live.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		var rows []*store.Object
		err := st.Read(t.Context(), func(tx store.Tx) (err error) {
			rows, err = tx.List(t.Context(), store.ListQuery{Kind: kinds.TrafficMinute, AccountID: "acct_1", ParentID: "edghts_1"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].ID != rowID("live", key{"acct_1", "edghts_1", "", c.Now().Unix() / 60}) {
			t.Fatalf("rows after the flush: %d, want only the live replica's", len(rows))
		}
		if live.Flush(t.Context(), st) != nil || len(live.dirty) != 0 {
			t.Fatalf("%d minutes still to write after a flush", len(live.dirty))
		}
	})
}

// failingStore refuses every write, as a store that is down.
type failingStore struct{ store.Store }

func (failingStore) Write(context.Context, func(store.Tx) error) error { return errors.New("down") }

// Minutes that could not be written are kept for the next flush, but not beyond the window:
// a long outage does not grow the recorder.
func TestOutageBoundsMemory(t *testing.T) {
	onEachStore(t, func(t *testing.T, st *sqlstore.Store) {
		c := &clock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
		r := NewRecorder("a", c.Now)
		r.Request("acct_1", "edghts_1", "", 200, time.Millisecond, 0, 0)
		if err := r.Flush(t.Context(), failingStore{st}); err == nil {
			t.Fatal("a flush to a store that is down succeeded")
		}
		c.Add(time.Minute)
		r.Request("acct_1", "edghts_1", "", 200, time.Millisecond, 0, 0)
		if err := r.Flush(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		if got := read(t, st, "edghts_1", "", c.Now()); got.Buckets[58].Requests != 1 || got.Buckets[59].Requests != 1 {
			t.Fatalf("after the outage: %d and %d requests, want the minute kept through it and the next", got.Buckets[58].Requests, got.Buckets[59].Requests)
		}
		r.Request("acct_1", "edghts_2", "", 200, time.Millisecond, 0, 0)
		_ = r.Flush(t.Context(), failingStore{st})
		c.Add(Window + 2*time.Minute)
		_ = r.Flush(t.Context(), failingStore{st})
		if len(r.minutes) != 0 || len(r.dirty) != 0 {
			t.Fatalf("%d minutes kept beyond the window", len(r.minutes))
		}
	})
}
