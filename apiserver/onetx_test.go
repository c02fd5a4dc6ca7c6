package apiserver_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// countingStore counts the transactions the server begins.
type countingStore struct {
	store.Store
	reads, writes atomic.Int64
}

func (s *countingStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	s.reads.Add(1)
	return s.Store.Read(ctx, fn)
}

func (s *countingStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	s.writes.Add(1)
	return s.Store.Write(ctx, fn)
}

// A GET, authentication included, is one read transaction, whatever it answers; the key is
// still read from the database on every request.
func TestGetIsOneReadTransaction(t *testing.T) {
	counting := &countingStore{}
	c := newTC(t, func(o *apiserver.Options) { counting.Store = o.Store; o.Store = counting })
	policy := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "one"})
	key := c.ok(201, "POST", "/api_keys", map[string]any{"description": "reader"})
	reader := c.as(str(key["token"]))

	for _, tt := range []struct {
		name, path string
		status     int
		code, msg  string
	}{
		{"by ID", "/ip_policies/" + str(policy["id"]), 200, "", ""},
		{"first page", "/ip_policies", 200, "", ""},
		{"missing", "/ip_policies/ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", 404, "", "Resource not found"},
		{"wrong prefix", "/ip_policies/cr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue", 400, "ERR_227", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reads, writes := counting.reads.Load(), counting.writes.Load()
			r := reader.req("GET", tt.path, nil)
			equal(t, "status", r.status, tt.status)
			if tt.status != 200 {
				equal(t, "error_code", str(r.body["error_code"]), tt.code)
				if tt.msg != "" {
					equal(t, "msg", str(r.body["msg"]), tt.msg)
				}
			}
			equal(t, "read transactions", counting.reads.Load()-reads, int64(1))
			equal(t, "write transactions", counting.writes.Load()-writes, int64(0))
			equal(t, "rate limit header", r.header.Get("X-RateLimit-Limit"), "6000")
			equal(t, "content type", r.header.Get("Content-Type"), "application/json")
		})
	}

	// The shared transaction still sees a key deleted a moment ago.
	c.ok(204, "DELETE", "/api_keys/"+str(key["id"]), nil)
	reader.fails(403, "ERR_203", "GET", "/ip_policies/"+str(policy["id"]), nil)
}

// A create with an Idempotency-Key costs what a plain create costs: one write transaction,
// which holds the object and the record of its answer, and the same reads. A replay is one
// write transaction too, which finds the record and writes nothing.
func TestKeyedCreateIsOneWriteTransaction(t *testing.T) {
	counting := &countingStore{}
	onEachDatabase(t, func(t *testing.T, c *tc) {
		post := func(hdr ...string) (reads, writes int64, r response) {
			reads, writes = counting.reads.Load(), counting.writes.Load()
			r = c.req("POST", "/ip_policies", map[string]any{"description": "counted"}, hdr...)
			return counting.reads.Load() - reads, counting.writes.Load() - writes, r
		}
		plainReads, writes, r := post()
		equal(t, "plain create", []any{r.status, writes}, []any{201, int64(1)})
		reads, writes, first := post(idemHeader, "counted")
		equal(t, "keyed create", []any{first.status, reads, writes}, []any{201, plainReads, int64(1)})
		reads, writes, r = post(idemHeader, "counted")
		equal(t, "replay", []any{r.status, r.header.Get(idemReplayedHeader), r.raw, reads, writes}, []any{201, "true", first.raw, plainReads, int64(1)})
		equal(t, "IP policies", c.stored("ip_policy", c.srv.AccountID), 2)
	}, func(o *apiserver.Options) { counting.Store = o.Store; o.Store = counting })
}
