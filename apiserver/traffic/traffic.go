// Package traffic keeps the traffic of edges and routes minute by minute for the last hour,
// across replicas: each replica counts in memory what its edge serves and writes its minutes
// to the store (Recorder.Flush), one row per replica, edge, route and minute; a read sums
// the rows of every replica (Read). Latency is kept as a histogram, which sums, and turned
// into percentiles only when read.
package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Window is how far back traffic is kept and read; a read has one bucket per minute of it.
const Window = time.Hour

// Bounds are the upper bounds, in seconds, of the latency histogram's buckets (those of the
// edge's warren_edge_request_duration_seconds); one more bucket counts what is beyond.
var Bounds = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// minute is one row: the traffic of one edge or route in one minute, as one replica saw it.
type minute struct {
	EdgeID      string   `json:"edge_id"`
	RouteID     string   `json:"route_id,omitempty"`
	Start       string   `json:"start"` // api.TimeFormat, compared as text
	Requests    int64    `json:"requests"`
	Classes     [5]int64 `json:"classes"` // 1xx … 5xx
	Latency     []int64  `json:"latency"` // counts by Bounds, the last beyond them
	Connections int64    `json:"connections"`
	BytesIn     int64    `json:"bytes_in"`
	BytesOut    int64    `json:"bytes_out"`
}

func (m *minute) add(o *minute) {
	m.Requests += o.Requests
	m.Connections += o.Connections
	m.BytesIn += o.BytesIn
	m.BytesOut += o.BytesOut
	for i := range m.Classes {
		m.Classes[i] += o.Classes[i]
	}
	for i := range min(len(m.Latency), len(o.Latency)) {
		m.Latency[i] += o.Latency[i]
	}
}

type key struct {
	account, edge, route string
	minute               int64 // Unix minutes
}

// Recorder counts the traffic of one replica until Flush writes it.
type Recorder struct {
	replica string
	now     func() time.Time

	mu      sync.Mutex
	minutes map[key]*minute // the minutes not written yet, or written and still under way
	dirty   map[key]bool
}

// NewRecorder returns the recorder of the replica named replica (unique among the replicas
// sharing a store); now is its clock.
func NewRecorder(replica string, now func() time.Time) *Recorder {
	return &Recorder{replica: replica, now: now, minutes: map[key]*minute{}, dirty: map[key]bool{}}
}

// Request counts one HTTP request of an edge's route ("" when none matched).
func (r *Recorder) Request(account, edge, route string, status int, d time.Duration, in, out int64) {
	lat := 0
	for lat < len(Bounds) && d.Seconds() > Bounds[lat] {
		lat++
	}
	r.count(account, edge, route, func(m *minute) {
		m.Requests++
		if c := status/100 - 1; c >= 0 && c < len(m.Classes) {
			m.Classes[c]++
		}
		m.Latency[lat]++
		m.BytesIn += in
		m.BytesOut += out
	})
}

// Connection counts one TCP or TLS connection of an edge.
func (r *Recorder) Connection(account, edge string, in, out int64) {
	r.count(account, edge, "", func(m *minute) {
		m.Connections++
		m.BytesIn += in
		m.BytesOut += out
	})
}

func (r *Recorder) count(account, edge, route string, fn func(*minute)) {
	if r == nil || account == "" {
		return
	}
	now := r.now().UTC()
	k := key{account, edge, route, now.Unix() / 60}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.minutes[k]
	if m == nil {
		m = &minute{EdgeID: edge, RouteID: route, Start: time.Unix(k.minute*60, 0).UTC().Format(api.TimeFormat),
			Latency: make([]int64, len(Bounds)+1)}
		r.minutes[k] = m
	}
	fn(m)
	r.dirty[k] = true
}

// rowID names the row of k written by replica: stable, so that a minute is rewritten in
// place until it ends.
func rowID(replica string, k key) string {
	return fmt.Sprintf("trf_%s_%s_%d_%s", k.edge, k.route, k.minute, replica)
}

// Flush writes the minutes counted since the last Flush, in one write transaction, and
// deletes the rows of their edges that fell out of the window (any replica's, so that the
// rows of a replica gone are deleted too). On error the minutes stay to be written next time,
// until they fall out of the window themselves.
func (r *Recorder) Flush(ctx context.Context, st store.Store) error {
	oldest := r.now().UTC().Add(-Window-time.Minute).Unix() / 60
	r.mu.Lock()
	for k := range r.minutes { // not written while the store was down, and no longer read
		if k.minute < oldest {
			delete(r.minutes, k)
			delete(r.dirty, k)
		}
	}
	rows := map[key]minute{}
	for k := range r.dirty {
		m := *r.minutes[k]
		m.Latency = append([]int64(nil), m.Latency...)
		rows[k] = m
	}
	r.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	cutoff := r.now().UTC().Add(-Window - time.Minute).Format(api.TimeFormat)
	err := st.Write(ctx, func(tx store.Tx) error {
		edges := map[[2]string]bool{}
		for k, m := range rows {
			doc, err := json.Marshal(m)
			if err != nil {
				return err
			}
			o := &store.Object{Kind: kinds.TrafficMinute, ID: rowID(r.replica, k), AccountID: k.account, ParentID: k.edge, Doc: doc}
			if err := tx.Update(ctx, o); errors.Is(err, store.ErrNotFound) {
				err = tx.Insert(ctx, o)
			} else if err != nil {
				return err
			}
			edges[[2]string{k.account, k.edge}] = true
		}
		for e := range edges {
			stale, err := tx.List(ctx, store.ListQuery{Kind: kinds.TrafficMinute, AccountID: e[0], ParentID: e[1], DocsOnly: true,
				Where: &store.Cond{Op: store.OpCompare, Cmp: "<",
					Left:  &store.Value{Kind: store.ValueMember, Path: []string{"start"}, Type: store.Time},
					Right: &store.Value{Kind: store.ValueConst, Const: cutoff}}})
			if err != nil {
				return err
			}
			for _, o := range stale {
				if err := tx.Delete(ctx, o.Kind, o.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// What was written is clean unless counted again meanwhile; ended minutes are done.
	current := r.now().UTC().Unix() / 60
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, m := range rows {
		if r.minutes[k].Requests == m.Requests && r.minutes[k].Connections == m.Connections {
			delete(r.dirty, k)
		}
		if k.minute < current && !r.dirty[k] {
			delete(r.minutes, k)
		}
	}
	return nil
}

// Run flushes every interval until ctx ends, then once more; report receives the errors.
func (r *Recorder) Run(ctx context.Context, st store.Store, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := r.Flush(flushCtx, st); err != nil {
				report(err)
			}
			return
		case <-t.C:
			if err := r.Flush(ctx, st); err != nil && ctx.Err() == nil {
				report(err)
			}
		}
	}
}

// Read returns the traffic of an account's edge over the window ending at now, summed over
// every replica's rows: the edge's whole traffic when route is "", else the route's.
func Read(ctx context.Context, tx store.Tx, account, edge, route string, now time.Time) (*api.Traffic, error) {
	objs, err := tx.List(ctx, store.ListQuery{Kind: kinds.TrafficMinute, AccountID: account, ParentID: edge, DocsOnly: true})
	if err != nil {
		return nil, err
	}
	n := int(Window / time.Minute)
	last := now.UTC().Unix() / 60
	first := last - int64(n) + 1
	sums := make([]minute, n)
	for i := range sums {
		sums[i].Latency = make([]int64, len(Bounds)+1)
	}
	for _, o := range objs {
		var m minute
		if err := json.Unmarshal(o.Doc, &m); err != nil {
			return nil, fmt.Errorf("traffic: row %s: %w", o.ID, err)
		}
		start, err := time.Parse(api.TimeFormat, m.Start)
		if err != nil {
			return nil, fmt.Errorf("traffic: row %s: %w", o.ID, err)
		}
		if i := start.Unix()/60 - first; i >= 0 && i < int64(n) && (route == "" || m.RouteID == route) {
			sums[i].add(&m)
		}
	}
	t := &api.Traffic{EdgeID: edge, RouteID: route, BucketSeconds: 60, Buckets: make([]api.TrafficBucket, n)}
	for i, m := range sums {
		t.Buckets[i] = api.TrafficBucket{
			Start:    time.Unix((first+int64(i))*60, 0).UTC().Format(api.TimeFormat),
			Requests: m.Requests,
			Status: api.TrafficStatus{S1xx: m.Classes[0], S2xx: m.Classes[1], S3xx: m.Classes[2],
				S4xx: m.Classes[3], S5xx: m.Classes[4]},
			LatencyMS:   latency(m.Latency),
			Connections: m.Connections, BytesIn: m.BytesIn, BytesOut: m.BytesOut,
		}
	}
	return t, nil
}

// latency estimates the percentiles of a histogram as Prometheus's histogram_quantile does:
// linearly within the bucket the rank falls in (from 0 in the first; the last bucket, which
// has no upper bound, answers its lower one). nil when it counted nothing.
func latency(counts []int64) *api.TrafficLatency {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return nil
	}
	q := func(p float64) float64 {
		rank := p * float64(total)
		var below int64
		for i, c := range counts {
			if c > 0 && float64(below+c) >= rank {
				if i == len(Bounds) {
					return Bounds[i-1] * 1000
				}
				lo := 0.0
				if i > 0 {
					lo = Bounds[i-1]
				}
				v := lo + (Bounds[i]-lo)*(rank-float64(below))/float64(c)
				return math.Round(v*1e6) / 1e3 // ms, to the microsecond
			}
			below += c
		}
		return Bounds[len(Bounds)-1] * 1000
	}
	return &api.TrafficLatency{P50: q(.5), P90: q(.9), P99: q(.99)}
}
