package rules

import (
	"errors"
	"strings"
	"testing"
)

func code(err error) string {
	var v *Violation
	if errors.As(err, &v) {
		return v.Code
	}
	return ""
}

func TestACLRule(t *testing.T) {
	for _, rule := range []string{"*", "bind:example.com", "bind:*.example.com", "bind:a-b.example.com", "bind:example.com:443", "bind:1.2.3.4:22", "bind:[::1]:22", "bind:env=prod", "bind:*=prod", "bind:env=*", "bind:*=*"} {
		if err := ACLRule(rule); err != nil {
			t.Errorf("ACLRule(%q) = %v, want nil", rule, err)
		}
	}
	for _, rule := range []string{"", "**", "bind", "bind:", "connect:example.com", "bind:exa mple.com", "bind:*.", "bind:a.*.com", "bind:-a.com", "bind:example.com:0", "bind:example.com:70000", "bind:example.com:http", "bind:=v", "bind:k=", "bind:a=b=c", "bind:" + strings.Repeat("a", 64) + ".com"} {
		if err := ACLRule(rule); code(err) != "ERR_600" {
			t.Errorf("ACLRule(%q) = %v, want ERR_600", rule, err)
		}
	}
	if err := ACL([]string{"*", "nope"}); code(err) != "ERR_600" {
		t.Errorf("ACL with one bad rule = %v", err)
	}
}

func TestDescriptionMetadata(t *testing.T) {
	long := func(n int) *string { s := strings.Repeat("é", n/2); return &s } // 2 bytes per rune
	for _, tt := range []struct {
		description, metadata *string
		want                  string
	}{
		{nil, nil, ""},
		{long(254), long(4096), ""},
		{long(256), nil, "ERR_604"},
		{nil, long(4098), "ERR_605"},
	} {
		if got := code(DescriptionMetadata(CredentialText, tt.description, tt.metadata)); got != tt.want {
			t.Errorf("DescriptionMetadata = %q, want %q", got, tt.want)
		}
	}
}

func TestSSHCAKey(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	for _, tt := range []struct {
		keyType *string
		size    *int64
		curve   *string
		want    string
	}{
		{nil, nil, nil, ""},
		{s("rsa"), n(2048), nil, ""},
		{s("rsa"), n(4096), nil, ""},
		{s("rsa"), nil, nil, ""},
		{s("ecdsa"), nil, s("p384"), ""},
		{s("ed25519"), nil, nil, ""},
		{s("dsa"), nil, nil, "ERR_1936"},
		{s("rsa"), n(1024), nil, "ERR_1939"},
		{s("ecdsa"), n(2048), nil, "ERR_1940"},
		{nil, n(2048), nil, "ERR_1940"},
		{s("ecdsa"), nil, s("p999"), "ERR_1941"},
		{s("ed25519"), nil, s("p256"), "ERR_1942"},
	} {
		if got := code(SSHCAKey(tt.keyType, tt.size, tt.curve)); got != tt.want {
			t.Errorf("SSHCAKey(%v, %v, %v) = %q, want %q", tt.keyType, tt.size, tt.curve, got, tt.want)
		}
	}
}

func TestServiceUserName(t *testing.T) {
	for name, want := range map[string]string{"ci": "", "": "ERR_4109", "  ": "ERR_4109", strings.Repeat("x", 256): "ERR_4110"} {
		if got := code(ServiceUserName(name)); got != want {
			t.Errorf("ServiceUserName(%q) = %q, want %q", name, got, want)
		}
	}
}
