package apiserver_test

import (
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
