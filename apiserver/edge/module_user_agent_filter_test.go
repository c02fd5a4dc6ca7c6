package edge_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestUserAgentFilter: an allow pattern wins over the deny patterns; a User-Agent matching a
// deny pattern, or none at all, is refused with 403 ERR_8014 before the upstream; any other
// passes, and an allow list alone refuses nothing but the missing User-Agent.
func TestUserAgentFilter(t *testing.T) {
	e := newEnv(t)
	var hits atomic.Int64
	backend := e.handlerApp(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "ua=%s", r.UserAgent())
	}))
	e.httpsEdge("ua.example.test", backend, map[string]any{"user_agent_filter": map[string]any{
		"allow": []string{"(?i)googlebot-image"}, "deny": []string{"(?i)bot", "^curl/"}}})
	e.httpsEdge("allowonly.example.test", backend, map[string]any{"user_agent_filter": map[string]any{"allow": []string{"^$"}}})
	c := e.client()
	served := int64(0)
	for _, tc := range []struct {
		host, ua string
		pass     bool
	}{
		{"ua.example.test", "Mozilla/5.0 (X11; Linux x86_64)", true},
		{"ua.example.test", "Googlebot/2.1", false},
		{"ua.example.test", "Googlebot-Image/1.0", true},
		{"ua.example.test", "curl/8.5.0", false},
		{"ua.example.test", "", false},
		{"allowonly.example.test", "", true},
		{"allowonly.example.test", "curl/8.5.0", true},
	} {
		status, body, h := e.get(c, "https://"+tc.host+"/", "User-Agent", tc.ua)
		switch {
		case tc.pass && (status != 200 || body != "ua="+tc.ua):
			t.Fatalf("%s with %q: %d %q, want it served", tc.host, tc.ua, status, body)
		case !tc.pass && (status != http.StatusForbidden || h.Get("Warren-Error-Code") != "ERR_8014"):
			t.Fatalf("%s with %q: %d %q, want 403 ERR_8014", tc.host, tc.ua, status, body)
		}
		if tc.pass {
			served++
		}
		if hits.Load() != served {
			t.Fatalf("%s with %q: the upstream saw %d requests, want %d", tc.host, tc.ua, hits.Load(), served)
		}
	}
}
