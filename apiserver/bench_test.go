package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
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
