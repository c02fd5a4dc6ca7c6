package rules

import (
	"net/netip"
	"testing"
)

func TestCIDR(t *testing.T) {
	for _, tt := range []struct{ in, want, code string }{
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"192.168.1.7/32", "192.168.1.7/32", ""},
		{"0.0.0.0/0", "0.0.0.0/0", ""},
		{"2001:DB8::/32", "2001:db8::/32", ""},
		{"::/0", "::/0", ""},
		{"", "", "ERR_1405"},
		{"10.0.0.1", "", "ERR_1413"},
		{"2001:db8::1", "", "ERR_1413"},
		{"nope", "", "ERR_1406"},
		{"10.0.0.0/33", "", "ERR_1406"},
		{"10.0.0.1/8", "", "ERR_1409"},
		{"2001:db8::1/32", "", "ERR_1409"},
	} {
		got, err := CIDR(tt.in)
		if code(err) != tt.code || got != tt.want {
			t.Errorf("CIDR(%q) = %q, %v; want %q, %s", tt.in, got, err, tt.want, tt.code)
		}
	}
	if _, err := CIDR("10.1.2.3/8"); err == nil || err.Error() != `The CIDR "10.1.2.3/8" must use the lowest address of its range: use 10.0.0.0/8.` {
		t.Errorf("ERR_1409 message = %v", err)
	}
}

func TestIPRuleActionAndRestrictionType(t *testing.T) {
	for in, want := range map[string]string{"allow": "", "deny": "", "Allow": "ERR_1422", "": "ERR_1422"} {
		if got := code(IPRuleAction(in)); got != want {
			t.Errorf("IPRuleAction(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"api": "", "dashboard": "", "agent": "", "endpoints": "", "ssh": "ERR_215"} {
		if got := code(IPRestrictionType(in)); got != want {
			t.Errorf("IPRestrictionType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIPAllowed(t *testing.T) {
	rule := func(cidr string, deny bool) IPRule { return IPRule{Prefix: netip.MustParsePrefix(cidr), Deny: deny} }
	office := []IPRule{rule("198.51.100.0/24", false), rule("198.51.100.7/32", true), rule("2001:db8::/32", false)}
	for _, c := range []struct {
		ip   string
		want bool
	}{
		{"198.51.100.1", true},
		{"::ffff:198.51.100.1", true}, // an IPv4-mapped address matches the IPv4 rule
		{"198.51.100.7", false},       // deny wins whatever the order
		{"203.0.113.1", false},        // no allow rule contains it
		{"2001:db8::1", true},
	} {
		if got := IPAllowed(office, netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("IPAllowed(%s) = %v, want %v", c.ip, got, c.want)
		}
	}
	if IPAllowed(office, netip.Addr{}) || IPAllowed(nil, netip.MustParseAddr("198.51.100.1")) {
		t.Error("an invalid address or no rule at all let an address through")
	}
}
