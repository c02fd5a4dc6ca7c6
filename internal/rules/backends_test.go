package rules

import (
	"strings"
	"testing"
)

func TestBackendRules(t *testing.T) {
	children := func(n int) map[string]int64 {
		m := map[string]int64{}
		for i := range n {
			m[strings.Repeat("x", i+1)] = 1
		}
		return m
	}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"weights ok", Weights(map[string]int64{"a": 0, "b": 10000}), ""},
		{"weight too big", Weights(map[string]int64{"a": 10001}), "ERR_6512"},
		{"weight negative", Weights(map[string]int64{"a": -1}), "ERR_6512"},
		{"too many weighted", Weights(children(33)), "ERR_6511"},
		{"failover ok", FailoverChildren([]string{"a", "b"}), ""},
		{"failover twice", FailoverChildren([]string{"a", "a"}), "ERR_215"},
		{"too many failover", FailoverChildren(make([]string, 33)), "ERR_6513"},
		{"address ok", StaticAddress("10.0.0.5:8080"), ""},
		{"address v6", StaticAddress("[::1]:443"), ""},
		{"address no port", StaticAddress("10.0.0.5"), "ERR_6505"},
		{"address bad port", StaticAddress("host:0"), "ERR_6506"},
		{"address no host", StaticAddress(":80"), "ERR_6507"},
		{"response ok", HTTPResponse(404, "nope", map[string]string{"Content-Type": "text/plain"}), ""},
		{"status", HTTPResponse(99, "", nil), "ERR_6517"},
		{"body", HTTPResponse(200, strings.Repeat("x", MaxResponseBody+1), nil), "ERR_6516"},
		{"header name", HTTPResponse(200, "", map[string]string{"bad name": "x"}), "ERR_215"},
		{"header twice", HTTPResponse(200, "", map[string]string{"X-A": "1", "x-a": "2"}), "ERR_215"},
		{"labels ok", Labels(map[string]string{"env": "prod"}), ""},
		{"labels equal sign", Labels(map[string]string{"a=b": "c"}), "ERR_6531"},
		{"labels empty value", Labels(map[string]string{"a": ""}), "ERR_6510"},
		{"labels empty key", Labels(map[string]string{"": "a"}), "ERR_6509"},
	} {
		if got := code(tt.err); got != tt.want {
			t.Errorf("%s: %v (%q), want %q", tt.name, tt.err, got, tt.want)
		}
	}
}
