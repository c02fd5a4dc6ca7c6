package trafficpolicy

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"cel.dev/cel-go/common/types"
)

// eval compiles src in phase and evaluates it over x.
func eval(t *testing.T, phase, src string, x *Exchange) (bool, error) {
	t.Helper()
	prg, iss, badType, err := Expression(phase, src)
	if err != nil || iss != nil || badType != nil {
		t.Fatalf("%s does not compile: %v %v %v", src, err, iss, badType)
	}
	out, _, err := prg.Eval(x.variables())
	if err != nil {
		return false, err
	}
	return out == types.True, nil
}

// TestMacros: the helper macros evaluate over the request and response of the exchange.
func TestMacros(t *testing.T) {
	req := httptest.NewRequest("GET", "https://app.example.test/p?q=1&q=2", nil)
	req.Header.Set("X-Probe", "a")
	req.AddCookie(&http.Cookie{Name: "s", Value: "v"})
	res := &http.Response{StatusCode: 201, Header: http.Header{"App": {"x"}, "Set-Cookie": {"r=w; Path=/; HttpOnly"}}}
	x := &Exchange{Conn: Conn{Client: netip.MustParseAddrPort("192.0.2.7:4000"), Protocol: "https"}, Req: req, Res: res}
	for _, src := range []string{
		"inCidrRange(conn.client_ip, '192.0.2.0/24')",
		"!inCidrRange(conn.client_ip, '10.0.0.0/8')",
		"inCidrRanges(conn.client_ip, ['10.0.0.0/8', '192.0.2.7/32'])",
		"hasReqHeader('x-probe') && hasReqHeader('X-PROBE') && !hasReqHeader('x-none')",
		"getReqHeader('X-Probe') == ['a'] && getReqHeader('x-none') == []",
		"hasQueryParam('q') && getQueryParam('q') == ['1', '2'] && getQueryParam('z') == []",
		"hasReqCookie('s') && getReqCookie('s').value == 'v' && !hasReqCookie('t')",
		"getResHeader('app') == ['x'] && hasResHeader('App') && res.status_code == 201",
		"hasResCookie('r') && getResCookie('r').http_only",
		"req.url.raw == 'https://app.example.test/p?q=1&q=2' && req.url.query_params['q'][1] == '2'",
	} {
		if ok, err := eval(t, PhaseHTTPResponse, src, x); !ok || err != nil {
			t.Errorf("%s: %v %v", src, ok, err)
		}
	}
	for _, src := range []string{"inCidrRange(conn.client_ip, 'nope')", "inCidrRange('nope', '10.0.0.0/8')", "getReqCookie('t').value == ''"} {
		if _, err := eval(t, PhaseHTTPResponse, src, x); err == nil {
			t.Errorf("%s: no evaluation error", src)
		}
	}
	// A macro over a variable the phase does not have does not compile.
	if _, iss, _, _ := Expression(PhaseHTTPRequest, "hasResHeader('a')"); iss == nil {
		t.Error("hasResHeader compiled in on_http_request")
	}
	if _, iss, _, _ := Expression(PhaseTCPConnect, "getReqHeader('a') == []"); iss == nil {
		t.Error("getReqHeader compiled in on_tcp_connect")
	}
}

// TestURLPattern: the first match of from is replaced by to with its groups; no from
// replaces the whole URL; no match leaves it.
func TestURLPattern(t *testing.T) {
	from := func(s string) *string { return &s }
	for _, tt := range []struct {
		from     *string
		to, url  string
		want     string
		replaced bool
	}{
		{from("/old/([a-z]+)"), "/new/$1", "https://h/old/page?x=1", "https://h/new/page?x=1", true},
		{from("^http://(.*)$"), "https://$1", "http://h/a", "https://h/a", true},
		{from(`/v(?P<n>\d)/`), "/version-${n}/", "https://h/v2/x", "https://h/version-2/x", true},
		{nil, "https://elsewhere/", "https://h/a", "https://elsewhere/", true},
		{from("/nomatch"), "/x", "https://h/a", "https://h/a", false},
	} {
		p, err := parseURLPattern(tt.from, tt.to)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := p.apply(tt.url); got != tt.want || ok != tt.replaced {
			t.Errorf("%v → %s on %s: %s %v", tt.from, tt.to, tt.url, got, ok)
		}
	}
}

// TestSlidingWindow: the count of the window before weighs by the share of it still in the
// sliding window.
func TestSlidingWindow(t *testing.T) {
	l := NewLimits()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	take := func(d time.Duration) bool { ok, _ := l.take("k", 2, time.Minute, t0.Add(d)); return ok }
	if !take(0) || !take(10*time.Second) {
		t.Fatal("within capacity: refused")
	}
	if ok, retry := l.take("k", 2, time.Minute, t0.Add(20*time.Second)); ok || retry != 40*time.Second {
		t.Fatalf("past capacity: %v, retry %s", ok, retry)
	}
	if take(60 * time.Second) {
		t.Fatal("at the next window's start the previous one still counts whole")
	}
	// At 90 s the window before counts 2 × 30/60 = 1: one fits; at 91 s 2 × 29/60 + 1 < 2: one
	// more; at 92 s 2 × 28/60 + 2 ≥ 2.
	if !take(90*time.Second) || !take(91*time.Second) || take(92*time.Second) {
		t.Fatal("the window before does not weigh by its share")
	}
	if ok, _ := l.take("other", 2, time.Minute, t0.Add(91*time.Second)); !ok {
		t.Fatal("another key shares the bucket")
	}
	if !take(180*time.Second) || !take(181*time.Second) {
		t.Fatal("two windows later the bucket is empty")
	}
}

func TestAcceptedEncodings(t *testing.T) {
	got := acceptedEncodings([]string{"gzip;q=0.5, zstd", "br;q=0, *;q=0.1"})
	for k, want := range map[string]bool{"gzip": true, "zstd": true, "br": false, "-br": true, "*": true, "deflate": false} {
		if got[k] != want {
			t.Errorf("%s: %v, want %v (%v)", k, got[k], want, got)
		}
	}
}

// TestActionPhases: each action type is allowed in its phases only, and an action type
// this server does not run is ErrUnsupported.
func TestActionPhases(t *testing.T) {
	if _, err := ParseAction(PhaseTCPConnect, "custom-response", map[string]any{"status_code": 200}); err == nil || !strings.Contains(err.Error(), "runs in on_http_request, on_http_response") {
		t.Errorf("custom-response on_tcp_connect: %v", err)
	}
	if _, err := ParseAction(PhaseHTTPResponse, "close-connection", nil); err == nil {
		t.Error("close-connection accepted in on_http_response")
	}
	if _, err := ParseAction(PhaseHTTPRequest, "basic-auth", nil); err != ErrUnsupported {
		t.Errorf("basic-auth: %v", err)
	}
	if _, err := ParseAction(PhaseHTTPRequest, "deny", []any{}); err == nil {
		t.Error("a config that is not a mapping accepted")
	}
}
