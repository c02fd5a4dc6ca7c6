package rules

import "testing"

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
