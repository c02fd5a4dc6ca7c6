package apiserver_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
)

// fixedClock stops the server's clock, so the rate limit's headers are exact.
func fixedClock(limit int) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.RateLimit = limit
		o.Now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	}
}

func rateHeaders(r response) []string {
	return []string{r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"), r.header.Get("Retry-After")}
}

// Every answer of the API, allowed or refused, says where the account stands; a refused one
// is 429 ERR_226 with Retry-After.
func TestRateLimitHeaders(t *testing.T) {
	c := newTC(t, fixedClock(2)) // one request back every 30 s
	equal(t, "1st", rateHeaders(c.req("GET", "/api_keys", nil)), []string{"2", "1", "30", ""})
	equal(t, "2nd", rateHeaders(c.req("POST", "/ip_policies", map[string]any{})), []string{"2", "0", "60", ""})
	body := c.fails(429, "ERR_226", "GET", "/ip_policies", nil)
	equal(t, "msg", body["msg"], "Rate limit exceeded: at most 2 requests per 60 seconds per account. Retry in 30 seconds.")
	equal(t, "3rd", rateHeaders(c.req("GET", "/ip_policies", nil)), []string{"2", "0", "60", "30"})
	// A path outside the API is not counted.
	equal(t, "unknown path", rateHeaders(c.req("GET", "/nope", nil)), []string{"", "", "", ""})
	// Another account has its own allowance.
	other := c.as(c.srv.NewAccount(t))
	equal(t, "other account", rateHeaders(other.req("GET", "/api_keys", nil)), []string{"2", "1", "30", ""})
	// Browsers may read them.
	r := c.req("GET", "/api_keys", nil, "Origin", "https://x.example")
	equal(t, "exposed", r.header.Get("Access-Control-Expose-Headers"), "Service-Operation-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset")
}

// Options.RateLimit 0 is the default limit; a negative one turns it off.
func TestRateLimitDefaultAndOff(t *testing.T) {
	c := newTC(t, fixedClock(0))
	equal(t, "default", rateHeaders(c.req("GET", "/api_keys", nil)), []string{"6000", "5999", "1", ""})
	equal(t, "constant", apiserver.DefaultRateLimit, 6000)
	off := newTC(t, fixedClock(-1))
	for range 3 {
		equal(t, "off", rateHeaders(off.req("GET", "/api_keys", nil)), []string{"", "", "", ""})
	}
}

// heldRequest is a POST whose handler runs but whose body has not come yet: the client sends
// Expect: 100-continue, and the server's 100 Continue tells that the handler has started
// reading the body, so holds its slot, until finish sends the body.
type heldRequest struct {
	body  *io.PipeWriter
	reply chan response
}

func (c *tc) hold(path string) *heldRequest {
	c.t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", c.srv.URL+path, pr)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	started := make(chan struct{})
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{Got100Continue: func() { close(started) }}))
	// A transport of its own: a new connection per held request, and a wait for the 100
	// Continue that never gives up and sends the body anyway.
	tr := &http.Transport{ExpectContinueTimeout: time.Hour}
	c.t.Cleanup(tr.CloseIdleConnections)
	// A test that fails while holding the request must not leave its handler waiting for the
	// body: the server's Close would wait for it for ever.
	c.t.Cleanup(func() { pw.CloseWithError(errors.New("the test ended")) })
	h := &heldRequest{body: pw, reply: make(chan response, 1)}
	go func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			h.reply <- response{raw: err.Error()}
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		h.reply <- response{status: resp.StatusCode, raw: string(data)}
	}()
	select {
	case <-started:
	case r := <-h.reply:
		c.t.Fatalf("POST %s answered before its body was sent: %d %s", path, r.status, r.raw)
	}
	return h
}

// finish sends the body and returns the answer.
func (h *heldRequest) finish(t *testing.T, body string) response {
	t.Helper()
	go func() { _, _ = io.WriteString(h.body, body); h.body.Close() }()
	return <-h.reply
}

// At most MaxConcurrentRequests requests of an account run at once; one more is 429 ERR_225
// and changes nothing, and a request that ends gives its slot back.
func TestConcurrentRequestsCap(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.MaxConcurrentRequests = 2 })
	first, second := c.hold("/ip_policies"), c.hold("/ip_policies")
	r := c.req("POST", "/ip_policies", map[string]any{"description": "third"})
	equal(t, "status", r.status, 429)
	equal(t, "Retry-After", r.header.Get("Retry-After"), "1")
	equal(t, "body", r.body, map[string]any{"error_code": "ERR_225", "status_code": 429.0,
		"msg":     "Too many simultaneous API requests: at most 2 at once per account. Retry when one of them has finished.",
		"details": map[string]any{"operation_id": r.header.Get("Service-Operation-Id")}})
	c.fails(429, "ERR_225", "GET", "/ip_policies", nil)
	// Another account has slots of its own.
	other := c.as(c.srv.NewAccount(t))
	other.ok(200, "GET", "/ip_policies", nil)

	equal(t, "first", first.finish(t, `{"description":"first"}`).status, 201)
	list := c.ok(200, "GET", "/ip_policies", nil)
	equal(t, "policies while one is held", len(list["ip_policies"].([]any)), 1)
	equal(t, "second", second.finish(t, `{"description":"second"}`).status, 201)
	list = c.ok(200, "GET", "/ip_policies", nil)
	var descriptions []string
	for _, p := range list["ip_policies"].([]any) {
		descriptions = append(descriptions, str(p.(map[string]any)["description"]))
	}
	equal(t, "policies", descriptions, []string{"second", "first"})
}

// Options.MaxConcurrentRequests 0 is the default cap; a negative one turns it off.
func TestConcurrentRequestsCapDefaultAndOff(t *testing.T) {
	equal(t, "constant", apiserver.DefaultMaxConcurrentRequests, 64)
	for _, limit := range []int{0, -1} {
		c := newTC(t, func(o *apiserver.Options) { o.MaxConcurrentRequests = limit })
		var held []*heldRequest
		for range apiserver.DefaultMaxConcurrentRequests {
			held = append(held, c.hold("/ip_policies"))
		}
		if limit == 0 {
			body := c.fails(429, "ERR_225", "GET", "/ip_policies", nil)
			equal(t, "msg", body["msg"], "Too many simultaneous API requests: at most 64 at once per account. Retry when one of them has finished.")
		} else {
			c.ok(200, "GET", "/ip_policies", nil)
		}
		for _, h := range held {
			equal(t, "held", h.finish(t, `{}`).status, 201)
		}
	}
}
