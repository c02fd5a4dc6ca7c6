package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// benchRequest sends one authenticated request, fails on an unexpected status and returns
// the body. The benchmarks turn the rate limit off: b.Loop sends more than any allowance.
func benchRequest(b *testing.B, srv *apiservertest.Server, method, path, body string, want int) []byte {
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+srv.APIKey)
	req.Header.Set("Service-Version", "2")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
