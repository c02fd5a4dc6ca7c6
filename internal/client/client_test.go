package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
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
	// That the wait is Retry-After's is pinned without a stopwatch by TestServerWait and by
	// the retry-timeout test, whose error names the wait the client planned.
	c := client.New(client.Config{BaseURL: srv.URL, MaxBackoff: 2 * time.Second})
	key, err := c.APIKeys.Get(context.Background(), "ak_1")
	if err != nil || key.ID != "ak_1" || calls.Load() != 3 {
		t.Fatalf("Get = %v, %v after %d calls", key, err, calls.Load())
	}
}

// Nothing listening (a wrong api_url) fails after a few quick retries, not after the retry
// timeout.
func TestConnectionRefusedRetriesAreCapped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // the port is now closed: connections are refused
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(client.Config{BaseURL: "http://" + addr, MaxBackoff: 10 * time.Millisecond})
	_, err = c.IPPolicies.Get(ctx, "ipp_1")
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "gave up after 5 attempts") {
		t.Fatalf("err = %v, want connection refused after 5 attempts", err)
	}
}

func TestNoRetryOnOtherErrors(t *testing.T) {
	for _, status := range []int{400, 403, 404, 409, 500, 502} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"status_code":%d,"msg":"no","details":{}}`, status)
		}))
		c := client.New(client.Config{BaseURL: srv.URL})
		if _, err := c.APIKeys.Create(context.Background(), api.APIKeyCreate{}); err == nil || calls.Load() != 1 {
			t.Errorf("status %d: err = %v after %d calls, want one call", status, err, calls.Load())
		}
		srv.Close()
	}
}

// A retried POST sends the same body again.
func TestRetryResendsTheBody(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Header.Get("Content-Type")+" "+string(b))
		if len(bodies) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":"ak_1","token":"t"}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	key, err := c.APIKeys.Create(context.Background(), api.APIKeyCreate{Description: api.String("ci")})
	if err != nil || key.ID != "ak_1" || *key.Token != "t" {
		t.Fatalf("Create = %+v, %v", key, err)
	}
	want := `application/json {"description":"ci"}`
	if len(bodies) != 2 || bodies[0] != want || bodies[1] != want {
		t.Fatalf("bodies = %q, want twice %q", bodies, want)
	}
}

// A request without a body sends no Content-Type; no request sends the key anywhere but
// the Authorization header, and errors never show it.
func TestNoBodyNoContentTypeAndNoLeakedKey(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.WriteHeader(403)
		fmt.Fprint(w, `{"error_code":"ERR_203","status_code":403,"msg":"the API key is not valid","details":{"operation_id":"op_2"}}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: "s3cr3t_key"})
	_, err := c.SSHCertificateAuthorities.Get(context.Background(), "sshca_1")
	if got.Header.Get("Content-Type") != "" || got.Method != "GET" || got.URL.Path != "/ssh_certificate_authorities/sshca_1" {
		t.Errorf("request = %s %s, Content-Type %q", got.Method, got.URL, got.Header.Get("Content-Type"))
	}
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "ERR_203") {
		t.Errorf("err = %v", err)
	}
}

// TestPaging follows next_page_uri (absolute, as the server writes it) across three pages
// and sends the filter and the limit on the first request.
func TestPaging(t *testing.T) {
	var requests []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.RequestURI())
		q := r.URL.Query()
		if q.Get("limit") != "2" {
			t.Errorf("request %s has no limit=2", r.URL)
		}
		// Items sv_1..sv_5, newest first: 5 4 | 3 2 | 1.
		ids := map[string][]string{"": {"sv_5", "sv_4"}, "sv_4": {"sv_3", "sv_2"}, "sv_2": {"sv_1"}}[q.Get("before_id")]
		var items []string
		for _, id := range ids {
			items = append(items, fmt.Sprintf(`{"id":%q,"name":%q,"active":true}`, id, id))
		}
		next := "null"
		if len(ids) == 2 {
			next = fmt.Sprintf(`"%s/service_users?before_id=%s&limit=2"`, srv.URL, ids[1])
		}
		fmt.Fprintf(w, `{"service_users":[%s],"uri":"%s/service_users","next_page_uri":%s}`, strings.Join(items, ","), srv.URL, next)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	users, err := c.ServiceUsers.List(context.Background(), client.ListOptions{Filter: `obj.id != ""`, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Name)
	}
	if strings.Join(names, " ") != "sv_5 sv_4 sv_3 sv_2 sv_1" {
		t.Errorf("items = %v", names)
	}
	want := []string{"/service_users?filter=obj.id+%21%3D+%22%22&limit=2", "/service_users?before_id=sv_4&limit=2", "/service_users?before_id=sv_2&limit=2"}
	if strings.Join(requests, " ") != strings.Join(want, " ") {
		t.Errorf("requests = %q, want %q", requests, want)
	}

	// Stopping early fetches no further page.
	requests = nil
	for u, err := range c.ServiceUsers.All(context.Background(), client.ListOptions{Limit: 2}) {
		if err != nil || u.ID != "sv_5" {
			t.Fatalf("first item = %v, %v", u.ID, err)
		}
		break
	}
	if len(requests) != 1 {
		t.Errorf("stopping after one item made %d requests", len(requests))
	}
}

// A page whose member is missing (a wrong collection member) is an error, not an empty list.
func TestPageWithoutMember(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"uri":"x","next_page_uri":null}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	if _, err := c.APIKeys.List(context.Background(), client.ListOptions{}); err == nil {
		t.Fatal("a page without its member decoded as empty")
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

// When the retries run out, the last answer is the error.
func TestRetriesRunOut(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"error_code":"ERR_226","status_code":429,"msg":"rate limited","details":{}}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL, MaxRetries: 2})
	_, err := c.Credentials.Get(context.Background(), "cr_1")
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code() != "ERR_226" || calls.Load() != 3 {
		t.Fatalf("err = %v after %d calls, want ERR_226 after 3", err, calls.Load())
	}
}

// TestRetryTimeout: a request whose next retry would come after RetryTimeout is given up at
// once with the last answer and ErrRetryTimeout, whether the server asks for a long wait or
// keeps refusing.
func TestRetryTimeout(t *testing.T) {
	for _, retryAfter := range []string{"60", "0"} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error_code":"ERR_226","status_code":429,"msg":"rate limited","details":{}}`)
		}))
		c := client.New(client.Config{BaseURL: srv.URL, RetryTimeout: 800 * time.Millisecond})
		_, err := c.IPPolicies.Get(context.Background(), "ipp_1")
		var apiErr *client.Error
		if !errors.Is(err, client.ErrRetryTimeout) || !errors.As(err, &apiErr) || apiErr.Code() != "ERR_226" {
			t.Errorf("Retry-After %s: err = %v, want ERR_226 and the retry timeout", retryAfter, err)
		}
		if want := regexp.MustCompile(`^warren API: 429 ERR_226: rate limited \(gave up after 1 attempt, as a retry in 1m[0-9.]+s would come after the retry timeout of 800ms\)$`); retryAfter == "60" && !want.MatchString(err.Error()) {
			t.Errorf("message %q does not match %s", err, want)
		}
		// A 60 s wait cannot fit: no retry. Retry-After 0 waits under 0.5 s: at least one retry.
		if n := calls.Load(); (retryAfter == "60" && n != 1) || (retryAfter == "0" && n < 2) {
			t.Errorf("Retry-After %s: %d calls", retryAfter, n)
		}
		srv.Close()
	}
}

// Cancelling the context ends the wait between retries at once, with the context's error.
func TestRetriesStopWhenTheContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(503)
		cancel() // while the client reads this answer, before it waits
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	_, err := c.IPPolicies.Get(ctx, "ipp_1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's cancellation", err)
	}
}

// resetFirst answers its first request by resetting the connection, later ones with body.
func resetFirst(t *testing.T, calls *atomic.Int32, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.(*net.TCPConn).SetLinger(0) // close with RST
			conn.Close()
			return
		}
		fmt.Fprint(w, body)
	}))
}

// A connection reset before the answer is retried for GET, PUT, DELETE and POST (which
// carries an Idempotency-Key), never for PATCH: it may have reached the server.
func TestConnectionResetRetriedOnlyWhenIdempotent(t *testing.T) {
	for method, call := range map[string]func(*client.Client) error{
		"GET":    func(c *client.Client) error { _, err := c.IPPolicies.Get(context.Background(), "ipp_1"); return err },
		"DELETE": func(c *client.Client) error { return c.IPPolicies.Delete(context.Background(), "ipp_1") },
		"POST": func(c *client.Client) error {
			_, err := c.IPPolicies.Create(context.Background(), api.IPPolicyCreate{})
			return err
		},
		"PATCH": func(c *client.Client) error {
			_, err := c.IPPolicies.Update(context.Background(), "ipp_1", api.IPPolicyUpdate{})
			return err
		},
	} {
		var calls atomic.Int32
		srv := resetFirst(t, &calls, `{"id":"ipp_1"}`)
		err := call(client.New(client.Config{BaseURL: srv.URL}))
		switch method {
		case "GET", "DELETE", "POST":
			if err != nil || calls.Load() != 2 {
				t.Errorf("%s: err = %v after %d calls, want success on the retry", method, err, calls.Load())
			}
		default:
			var apiErr *client.Error
			if err == nil || errors.As(err, &apiErr) || calls.Load() != 1 {
				t.Errorf("%s: err = %v after %d calls, want the connection error after one", method, err, calls.Load())
			}
		}
		srv.Close()
	}
}

// Every attempt of a POST carries one Idempotency-Key, a new one per call; other methods
// carry none. A 409 (the same request still running) is waited out.
func TestPOSTIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Method+" "+r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if r.Method == "POST" && n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"error_code":"ERR_215","status_code":409,"msg":"still being processed","details":{"param":"Idempotency-Key"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"ipp_1"}`)
	}))
	defer srv.Close()
	c := client.New(client.Config{BaseURL: srv.URL})
	ctx := context.Background()
	for range 2 {
		if _, err := c.IPPolicies.Create(ctx, api.IPPolicyCreate{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.IPPolicies.Update(ctx, "ipp_1", api.IPPolicyUpdate{}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 || !regexp.MustCompile(`^POST [0-9a-f]{32}$`).MatchString(keys[0]) || keys[1] != keys[0] || keys[2] == keys[0] ||
		!strings.HasPrefix(keys[2], "POST ") || len(keys[2]) != len(keys[0]) || keys[3] != "PATCH " {
		t.Fatalf("keys sent = %q", keys)
	}
	// Without a key (a PATCH) that 409 is an answer, not a reason to retry.
	keys = nil
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Method)
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error_code":"ERR_215","status_code":409,"msg":"conflict","details":{"param":"Idempotency-Key"}}`)
	})
	if _, err := c.IPPolicies.Update(ctx, "ipp_1", api.IPPolicyUpdate{}); err == nil || len(keys) != 1 {
		t.Fatalf("PATCH answered 409: err = %v after %q", err, keys)
	}
}

// TestPOSTRetriedAfterResetCreatesOnce: the real server creates the object, the answer is
// lost to a reset connection, the client retries with the same key and gets the first
// answer replayed: one object, not two.
func TestPOSTRetriedAfterResetCreatesOnce(t *testing.T) {
	real := apiservertest.Start(t)
	var calls atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := http.NewRequest(r.Method, real.URL+r.URL.RequestURI(), r.Body)
		out.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(out)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		if calls.Add(1) == 1 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.(*net.TCPConn).SetLinger(0) // the answer is lost: close with RST
			conn.Close()
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	c := client.New(client.Config{BaseURL: proxy.URL, APIKey: real.APIKey})
	created, err := c.IPPolicies.Create(context.Background(), api.IPPolicyCreate{Description: api.String("once")})
	if err != nil || calls.Load() != 2 {
		t.Fatalf("Create = %+v, %v after %d calls", created, err, calls.Load())
	}
	all, err := c.IPPolicies.List(context.Background(), client.ListOptions{})
	if err != nil || len(all) != 1 || all[0].ID != created.ID {
		t.Fatalf("List = %+v, %v; want only %s", all, err, created.ID)
	}
}

// refusals counts the server's 429 answers and notes when the first came.
type refusals struct {
	n     atomic.Int32
	first atomic.Int64 // Unix nanoseconds of the first 429, 0 before
}

func (r *refusals) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		r.n.Add(1)
		r.first.CompareAndSwap(0, time.Now().UnixNano())
	}
	return resp, err
}

// TestParallelWorkersWithinTheSpecRateLimit: ten workers make 240 requests (creates and
// reads) against a real server limited to details.md's 120 requests per 60 s. Past the burst
// the server answers 429, and every request still succeeds, each create exactly once.
//
// The server's clock stands still until its first 429, so the burst is surely spent whatever
// the machine's speed; then it runs 30 times faster than the wall clock, so the bucket refills
// in 2 s instead of a minute. Retry-After stays in real seconds: the client truly waits.
func TestParallelWorkersWithinTheSpecRateLimit(t *testing.T) {
	const workers, perWorker, speedup = 10, 12, 30
	seen := &refusals{}
	start := time.Now()
	srv := apiservertest.Start(t, func(o *apiserver.Options) {
		o.RateLimit = 120
		o.Now = func() time.Time {
			first := seen.first.Load()
			if first == 0 {
				return start
			}
			return start.Add(time.Since(time.Unix(0, first)) * speedup)
		}
	})
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey, HTTPClient: &http.Client{Transport: seen}})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				desc := fmt.Sprintf("w%d-%d", w, i)
				p, err := c.IPPolicies.Create(ctx, api.IPPolicyCreate{Description: api.String(desc)})
				if err == nil {
					p, err = c.IPPolicies.Get(ctx, p.ID)
				}
				if err == nil && p.Description != desc {
					err = fmt.Errorf("read back %q, want %q", p.Description, desc)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if seen.n.Load() == 0 {
		t.Fatal("the server never answered 429: the test did not exercise the limit")
	}
	all, err := c.IPPolicies.List(ctx, client.ListOptions{Limit: 100})
	if err != nil || len(all) != workers*perWorker {
		t.Fatalf("List = %d policies, %v; want %d, one per create", len(all), err, workers*perWorker)
	}
	t.Logf("%d requests answered 429 and were retried", seen.n.Load())
}
