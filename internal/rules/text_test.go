package rules

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipAndQuote(t *testing.T) {
	exact := strings.Repeat("é", MaxQuoted)
	for _, tt := range []struct{ in, clip, quote string }{
		{"", "", `""`},
		{"abc", "abc", `"abc"`},
		{exact, exact, `"` + exact + `"`},
		{exact + "x", exact + "…", `"` + exact + `…"`},
		{"a\x00b", "a\x00b", `"a\x00b"`},
	} {
		if got := Clip(tt.in); got != tt.clip {
			t.Errorf("Clip(%q) = %q, want %q", tt.in, got, tt.clip)
		}
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.quote)
		}
	}
	huge := strings.Repeat("x", 900<<10)
	if got := utf8.RuneCountInString(Clip(huge)); got != MaxQuoted+1 {
		t.Errorf("Clip of 900 KiB has %d runes, want %d", got, MaxQuoted+1)
	}
	if got := len(Quote(huge)); got > 2*MaxQuoted {
		t.Errorf("Quote of 900 KiB is %d bytes", got)
	}
}

func TestIdentifierAndFreeText(t *testing.T) {
	for _, tt := range []struct {
		value            string
		identifier, free bool // accepted?
	}{
		{"", true, true},
		{"plain name", true, true},
		{"ünïcödé ✓", true, true},
		{"tab\there", false, true},
		{"line\nbreak", false, true},
		{"crlf\r\n", false, true},
		{"nul\x00", false, false},
		{"bell\a", false, false},
		{"esc\x1b[31m", false, false},
		{"vt\v", false, false},
		{"ff\f", false, false},
		{"del\x7f", false, false},
		{"c1\u0085", false, false},
		{"c1\u009b", false, false},
		{"bad utf-8 \xff", false, false},
		{"lone surrogate \xed\xa0\x80", false, false},
		{"zero width\u200b", true, true}, // a format character, not a control character
	} {
		if got := Identifier("ERR_215", "name", tt.value) == nil; got != tt.identifier {
			t.Errorf("Identifier(%q) accepted = %v, want %v", tt.value, got, tt.identifier)
		}
		if got := FreeText("ERR_215", "description", tt.value) == nil; got != tt.free {
			t.Errorf("FreeText(%q) accepted = %v, want %v", tt.value, got, tt.free)
		}
	}
	err := Identifier("ERR_6505", "address", "a\x00b:1")
	if code(err) != "ERR_6505" || err.(*Violation).Field != "address" || !strings.Contains(err.Error(), "U+0000 at byte 1") {
		t.Errorf("Identifier error = %#v", err)
	}
	if err := Identifier("ERR_215", "name", strings.Repeat("x", 1<<20)+"\x00"); len(err.Error()) > 400 {
		t.Errorf("message of a 1 MiB value is %d bytes", len(err.Error()))
	}
}

// Every rule that validates an identifier refuses control characters, with its family's code.
func TestControlCharactersPerFamily(t *testing.T) {
	desc := "a\x00b"
	meta := "line\nbreak\tand\x01"
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"acl", ACLRule("bind:env=pr\x00od"), "ERR_600"},
		{"acl tab", ACLRule("bind:example.com\t"), "ERR_600"},
		{"service user name", ServiceUserName("bot\x00"), "ERR_215"},
		{"service user name newline", ServiceUserName("bot\nname"), "ERR_215"},
		{"static address", StaticAddress("exa\x00mple.com:443"), "ERR_6505"},
		{"label key", Labels(map[string]string{"k\x1b": "v"}), "ERR_215"},
		{"label value", Labels(map[string]string{"k": "v\n"}), "ERR_215"},
		{"header name", HTTPResponse(200, "", map[string]string{"X-A\x00": "v"}), "ERR_215"},
		{"header value", HTTPResponse(200, "", map[string]string{"X-A": "v\r\nX-B: evil"}), "ERR_215"},
		{"domain", ReservedDomain(NormalizeDomain("app\x00.example.com"), ""), "ERR_406"},
		{"domain inner tab", ReservedDomain(NormalizeDomain("app\t.example.com"), ""), "ERR_406"},
		{"cidr", func() error { _, err := CIDR("10.0.0.0/8\x00"); return err }(), "ERR_1406"},
		{"ssh public key comment", func() error {
			_, err := SSHPublicKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpXhjHcQ4TkUyP0xqD2uJj1Z3DBkL4lCXHyl1fJ9uZ8 me\x1b[2J")
			return err
		}(), "ERR_612"},
		{"description", DescriptionMetadata(CredentialText, &desc, nil), "ERR_604"},
		{"metadata", DescriptionMetadata(CredentialText, nil, &meta), "ERR_605"},
		{"region", AddrRegion("us\x00"), "ERR_500"},
	} {
		if code(tt.err) != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, tt.err, tt.want)
		}
	}
	// Free text keeps tab, newline and carriage return; a public key file's newline is fine.
	ok := "line\r\nbreak\tok"
	if err := DescriptionMetadata(CredentialText, &ok, &ok); err != nil {
		t.Errorf("free text with tab and newlines: %v", err)
	}
	if _, err := SSHPublicKey("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpXhjHcQ4TkUyP0xqD2uJj1Z3DBkL4lCXHyl1fJ9uZ8 me@host\n"); err != nil {
		t.Errorf("public key with a trailing newline: %v", err)
	}
}

// A library's message is cut at sensible boundaries: inside a quoted token, which keeps its
// closing quote and the words after it, and before a word, never in its middle.
func TestClipMessage(t *testing.T) {
	long := strings.Repeat("n", 3*MaxQuoted)
	for _, tt := range []struct{ in, want string }{
		{"undeclared reference to 'nu' (in container '')", "undeclared reference to 'nu' (in container '')"},
		{"undeclared reference to '" + long + "' (in container '')", "undeclared reference to '" + long[:MaxQuoted] + "…' (in container '')"},
		{strings.Repeat("word ", MaxMessage/5) + "tail", strings.TrimSpace(strings.Repeat("word ", MaxMessage/5-1)) + " word …"},
	} {
		got := ClipMessage(tt.in)
		if got != tt.want {
			t.Errorf("ClipMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	words := strings.Repeat("abcdefghij ", 40)
	got := ClipMessage(words)
	if !strings.HasSuffix(got, "abcdefghij …") || utf8.RuneCountInString(got) > MaxMessage+2 {
		t.Errorf("ClipMessage cut %q", got)
	}
}
