package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

func TestHeadersAndErrors(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error_code":"ERR_600","status_code":400,"msg":"bad rule","details":{"operation_id":"op_1"}}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: "secret-token", UserAgent: "test/1"})
	_, err := c.Credentials.Create(context.Background(), api.CredentialCreate{ACL: []string{"x"}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code() != "ERR_600" || apiErr.HTTPStatus != 400 || client.IsNotFound(err) {
		t.Fatalf("err = %#v", err)
	}
	if want := "warren API: 400 ERR_600: bad rule (operation op_1)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	for name, want := range map[string]string{"Authorization": "Bearer secret-token", "Service-Version": "2", "User-Agent": "test/1", "Content-Type": "application/json"} {
		if got.Get(name) != want {
			t.Errorf("header %s = %q, want %q", name, got.Get(name), want)
		}
	}
}

func TestNotFoundAndNonJSONErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api_keys/ak_x" {
			w.WriteHeader(404)
			fmt.Fprint(w, `{"status_code":404,"msg":"Resource not found","details":{}}`)
			return
		}
		w.WriteHeader(502)
		fmt.Fprint(w, "bad gateway")
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	if _, err := c.APIKeys.Get(context.Background(), "ak_x"); !client.IsNotFound(err) {
		t.Fatalf("Get = %v, want not found", err)
	}
	_, err := c.APIKeys.Get(context.Background(), "ak_y")
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 502 || apiErr.Body.Msg != "bad gateway" {
		t.Fatalf("err = %v", err)
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error_code":"ERR_226","status_code":429,"msg":"slow down","details":{}}`)
		case 2:
			w.WriteHeader(503)
		default:
			fmt.Fprint(w, `{"id":"ak_1","name":"x"}`)
		}
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL, MaxBackoff: 2 * time.Second})
	start := time.Now()
	key, err := c.APIKeys.Get(context.Background(), "ak_1")
	if err != nil || key.ID != "ak_1" || calls.Load() != 3 {
		t.Fatalf("Get = %v, %v after %d calls", key, err, calls.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("Retry-After: 1 was not honoured (waited %v)", waited)
	}
}

func TestNoRetryOnOtherErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(500)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	if _, err := c.APIKeys.Create(context.Background(), api.APIKeyCreate{}); err == nil || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls, want one call", err, calls.Load())
	}
}

func TestRetriesStopWhenTheContextEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL, MaxBackoff: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// Waiting out Retry-After (5s) would outlive the context: the error must be the context's.
	if _, err := c.APIKeys.Get(ctx, "ak_1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}

// TestAgainstTheServer runs the client against a real in-process server: CRUD, paging
// across pages and filters.
func TestAgainstTheServer(t *testing.T) {
	srv := apiservertest.Start(t)
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		cred, err := c.Credentials.Create(ctx, api.CredentialCreate{Description: api.String(fmt.Sprintf("c%d", i%2)), ACL: []string{"bind:a.example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		if cred.Token == nil || *cred.Token == "" {
			t.Fatal("no token on create")
		}
		ids = append(ids, cred.ID)
	}
	all, err := c.Credentials.List(ctx, client.ListOptions{Limit: 2})
	if err != nil || len(all) != 5 || all[0].ID != ids[4] {
		t.Fatalf("List across pages = %d items, %v", len(all), err)
	}
	filtered, err := c.Credentials.List(ctx, client.ListOptions{Limit: 1, Filter: `obj.description == "c0"`})
	if err != nil || len(filtered) != 3 {
		t.Fatalf("filtered List = %d items, %v", len(filtered), err)
	}
	updated, err := c.Credentials.Update(ctx, ids[0], api.CredentialUpdate{ACL: []string{}})
	if err != nil || len(updated.ACL) != 0 || updated.Description != "c0" {
		t.Fatalf("Update = %+v, %v", updated, err)
	}
	if err := c.Credentials.Delete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Credentials.Get(ctx, ids[0]); !client.IsNotFound(err) {
		t.Fatalf("Get after delete = %v", err)
	}
}
