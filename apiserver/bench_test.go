package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// benchRequest sends one authenticated request, with the header pairs in hdr, fails on an
// unexpected status and returns the body. The benchmarks turn the rate limit off: b.Loop
// sends more than any allowance.
func benchRequest(b *testing.B, srv *apiservertest.Server, method, path, body string, want int, hdr ...string) []byte {
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+srv.APIKey)
	req.Header.Set("Service-Version", "2")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		b.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, err)
	}
	return data
}

func BenchmarkCreateCredential(b *testing.B) {
	srv := apiservertest.Start(b, apiservertest.NoRateLimit)
	for b.Loop() {
		benchRequest(b, srv, "POST", "/credentials", `{"description":"bench","acl":["bind:*.example.com"]}`, 201)
	}
}

// BenchmarkCreateKeyed compares a create carrying an Idempotency-Key (a new key each time,
// as the provider sends) with a plain one, on each database, one at a time and ten at once
// (terraform's parallelism): their ratio is the cost of the key.
// go test ./apiserver -run '^$' -bench CreateKeyed
func BenchmarkCreateKeyed(b *testing.B) {
	for _, db := range []struct {
		name string
		open apiservertest.Opener
	}{
		{"sqlite", nil},
		{"postgres", func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
			return postgres.Open(ctx, pgcluster.Database(b), seal)
		}},
	} {
		for _, parallel := range []bool{false, true} {
			for _, keyed := range []bool{false, true} {
				name := db.name + map[bool]string{false: "/serial", true: "/parallel10"}[parallel] + map[bool]string{false: "/plain", true: "/keyed"}[keyed]
				b.Run(name, func(b *testing.B) {
					var srv *apiservertest.Server
					if db.open == nil {
						srv = apiservertest.Start(b, apiservertest.NoRateLimit)
					} else {
						srv = apiservertest.StartOn(b, db.open, apiservertest.NoRateLimit)
					}
					var n atomic.Int64
					post := func() {
						var hdr []string
						if i := n.Add(1); keyed {
							hdr = []string{"Idempotency-Key", "bench-" + strconv.FormatInt(i, 10)}
						}
						benchRequest(b, srv, "POST", "/ip_policies", `{"description":"bench"}`, 201, hdr...)
					}
					if !parallel {
						for b.Loop() {
							post()
						}
						return
					}
					b.SetParallelism(max(1, 10/runtime.GOMAXPROCS(0)))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							post()
						}
					})
				})
			}
		}
	}
}

func BenchmarkGetAuthenticated(b *testing.B) {
	srv := apiservertest.Start(b, apiservertest.NoRateLimit)
	benchRequest(b, srv, "GET", "/api_keys", "", 200)
	for b.Loop() {
		benchRequest(b, srv, "GET", "/api_keys?limit=10", "", 200)
	}
}

func BenchmarkListFiltered(b *testing.B) {
	srv := apiservertest.Start(b, apiservertest.NoRateLimit)
	for range 300 {
		benchRequest(b, srv, "POST", "/credentials", `{"description":"bench"}`, 201)
	}
	for b.Loop() {
		benchRequest(b, srv, "GET", `/credentials?filter=obj.description+%3D%3D+%22bench%22`, "", 200)
	}
}

// BenchmarkGetByIDHandler drives the handler directly (no network), with the binary's
// info-level JSON access log, so a CPU profile shows the server's own cost of a GET:
// go test ./apiserver -run '^$' -bench GetByIDHandler -cpuprofile cpu.out
func BenchmarkGetByIDHandler(b *testing.B) {
	h, token, path := benchHandler(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			serveBench(b, h, token, path)
		}
	})
}

// BenchmarkListHandler is BenchmarkGetByIDHandler for a first list page.
func BenchmarkListHandler(b *testing.B) {
	h, token, _ := benchHandler(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			serveBench(b, h, token, "/ip_policies")
		}
	})
}

// benchHandler starts a server on a temporary SQLite database with 100 IP policies and
// returns it, its admin token and the path of one policy.
func benchHandler(b *testing.B) (http.Handler, string, string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "warren.db"))
	if err != nil {
		b.Fatal(err)
	}
	token := ids.NewToken(ids.New(ids.APIKey))
	srv, err := apiserver.New(ctx, apiserver.Options{Store: db, BaseURL: "http://warren.test", BootstrapAPIKey: token,
		RateLimit: -1, Logger: zaplog.New(zap.NewAtomicLevelAt(zap.InfoLevel), io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close(); _ = db.Close() })
	var path string
	for range 100 {
		req := httptest.NewRequest("POST", "/ip_policies", strings.NewReader(`{"description":"bench"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var p api.IPPolicy
		if err := json.Unmarshal(rec.Body.Bytes(), &p); rec.Code != http.StatusCreated || err != nil {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
		path = "/ip_policies/" + p.ID
	}
	// The 100 creates are set-up, not the measured request.
	b.ReportAllocs()
	b.ResetTimer()
	return srv, token, path
}

func serveBench(b *testing.B, h http.Handler, token, path string) {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
}
