package main

import "testing"

func TestParsePortRange(t *testing.T) {
	for _, tt := range []struct {
		in       string
		min, max int
		ok       bool
	}{
		{"10000-60000", 10000, 60000, true},
		{" 20000 - 20010 ", 20000, 20010, true},
		{"443", 443, 443, true},
		{"", 0, 0, false},
		{"a-b", 0, 0, false},
		{"1-", 0, 0, false},
	} {
		lo, hi, err := parsePortRange(tt.in)
		if (err == nil) != tt.ok || lo != tt.min || hi != tt.max {
			t.Errorf("parsePortRange(%q) = %d, %d, %v", tt.in, lo, hi, err)
		}
	}
}
