package filter

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var now = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

var fields = Fields{
	"id":             String,
	"created_at":     Timestamp,
	"description":    String,
	"metadata":       String,
	"acl":            StringList,
	"ip_policy":      String,
	"certificate.id": String,
	"not_after":      Timestamp,
	"enabled":        Bool,
	"count":          Int,
	"owner_id":       String,
}

// decode builds the object the way the server does: from JSON.
func decode(t testing.TB, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const full = `{
	"id": "cr_2abc",
	"created_at": "2025-06-10T12:00:00Z",
	"description": "web",
	"metadata": "{\"env\":\"prod\"}",
	"acl": ["bind:x.com", "bind:*.y.com"],
	"ip_policy": {"id": "ipp_123", "uri": "https://api/ip_policies/ipp_123"},
	"certificate": {"id": "cert_9", "uri": "https://api/tls_certificates/cert_9"},
	"enabled": true,
	"count": 3
}`

// sparse has the empty values the API omits, and nulls.
const sparse = `{"id": "cr_3def", "created_at": "2024-01-01T00:00:00Z", "ip_policy": null, "certificate": null, "acl": null}`

func TestMatch(t *testing.T) {
	tests := []struct {
		expr         string
		full, sparse bool
	}{
		// Literals, logic, parentheses.
		{`true`, true, true},
		{`false`, false, false},
		{`!(obj.description == "web")`, false, true},
		{`obj.description == "web" && obj.enabled`, true, false},
		{`obj.description == "web" || obj.id == "cr_3def"`, true, true},
		{`(obj.description == "x" || obj.enabled) && obj.count == 3`, true, false},
		// Comparisons on strings and ints.
		{`obj.description != "web"`, false, true},
		{`obj.description < "x"`, true, true},
		{`obj.description <= "web"`, true, true},
		{`obj.description > "a"`, true, false},
		{`obj.description >= "web"`, true, false},
		{`obj.count > 2`, true, false},
		{`obj.count >= -1`, true, true},
		{`obj.count == 0`, false, true},
		{`obj.enabled == false`, false, true},
		// Empty strings and null.
		{`obj.description == ""`, false, true},
		{`obj.description == null`, false, true},
		{`null == obj.description`, false, true},
		{`obj.description != null`, true, false},
		{`obj.description != null && obj.description == ""`, false, false},
		{`obj.description == "web" || obj.description == null`, true, true},
		{`obj.certificate.id == null`, false, true},
		{`obj.acl == null`, false, true},
		{`obj.created_at != null`, true, true},
		{`obj.not_after == null`, true, true},
		// in.
		{`obj.description in ["web", "db"]`, true, false},
		{`obj.description in ["", "db"]`, false, true},
		{`"bind:x.com" in obj.acl`, true, false},
		{`!("bind:x.com" in obj.acl)`, false, true},
		{`obj.description in obj.acl`, false, false},
		// size().
		{`size(obj.acl) == 2`, true, false},
		{`obj.acl.size() == 0`, false, true},
		{`size(obj.description) > 0`, true, false},
		{`obj.description.size() == 0`, false, true},
		// String functions.
		{`obj.description.startsWith("we")`, true, false},
		{`obj.description.endsWith("eb")`, true, false},
		{`obj.metadata.contains("prod")`, true, false},
		// Timestamps: literals, time.now, add/subtract.
		{`obj.created_at > timestamp("2025-01-01T00:00:00Z")`, true, false},
		{`obj.created_at == timestamp("2025-06-10T14:00:00+02:00")`, true, false},
		{`obj.created_at > timestamp(time.now).subtract("7d")`, true, false},
		{`obj.created_at > timestamp(time.now).subtract("4d")`, false, false},
		{`obj.created_at < timestamp(time.now).add("1h")`, true, true},
		{`obj.created_at >= timestamp(time.now).subtract("5d")`, true, false},
		{`obj.created_at > timestamp(time.now).subtract("4d23h59m59s")`, false, false},
		{`obj.created_at > timestamp(time.now).subtract("5d1s")`, true, false},
		{`obj.created_at.add("5d") == timestamp(time.now)`, true, false},
		{`obj.created_at <= timestamp("2024-01-01T00:00:00Z")`, false, true},
		// An absent timestamp: == is false, != is true, ordering does not match.
		{`obj.not_after == timestamp(time.now)`, false, false},
		{`obj.not_after != timestamp(time.now)`, true, true},
		{`obj.not_after < timestamp(time.now)`, false, false},
		{`!(obj.not_after < timestamp(time.now))`, false, false},
		{`obj.not_after < timestamp(time.now) || obj.id == "cr_2abc"`, true, false},
		// Refs compare by id; nested fields.
		{`obj.ip_policy == "ipp_123"`, true, false},
		{`obj.ip_policy == ""`, false, true},
		{`obj.certificate.id == "cert_9"`, true, false},
		{`obj.certificate.id == ""`, false, true},
		{`obj.id == "cr_2abc"`, true, false},
	}
	objs := []map[string]any{decode(t, full), decode(t, sparse)}
	for _, tt := range tests {
		p, err := Compile(tt.expr, fields)
		if err != nil {
			t.Errorf("Compile(%s): %v", tt.expr, err)
			continue
		}
		for i, want := range []bool{tt.full, tt.sparse} {
			got, err := p.MatchAt(objs[i], now)
			if err != nil || got != want {
				t.Errorf("%s on object %d = %v, %v; want %v", tt.expr, i, got, err, want)
			}
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ expr, msg string }{
		{``, "Syntax error"},
		{`obj.description ==`, "Syntax error"},
		{`obj.description = "a"`, "Syntax error"},
		{`obj.nope == 1`, `unknown field "obj.nope"; the filterable fields are obj.acl, obj.certificate.id,`},
		{`obj.certificate == "x"`, `unknown field "obj.certificate"`},
		{`obj.description.x == "x"`, `unknown field "obj.description.x"`},
		{`obj == "x"`, "obj must be followed by a field name"},
		{`other.description == "x"`, `unknown variable "other"`},
		{`x == "x"`, `unknown variable "x"`},
		{`obj.created_at > time.now`, "time.now can only be used as timestamp(time.now)"},
		{`obj.created_at > timestamp(obj.created_at)`, "timestamp() takes time.now or an RFC 3339 string"},
		{`obj.created_at > timestamp("yesterday")`, "timestamp() takes time.now or an RFC 3339 string"},
		{`obj.created_at > timestamp(1700000000)`, "timestamp() takes time.now or an RFC 3339 string"},
		{`obj.created_at > timestamp(time.later)`, "timestamp() takes time.now or an RFC 3339 string"},
		{`obj.acl[0] == "x"`, "index access is not supported"},
		{`obj.count + 1 == 2`, "arithmetic is not supported"},
		{`obj.count - 1 == 2`, "arithmetic is not supported"},
		{`obj.count * 2 == 2`, "arithmetic is not supported"},
		{`obj.count / 2 == 2`, "arithmetic is not supported"},
		{`obj.count % 2 == 0`, "arithmetic is not supported"},
		{`-obj.count == 2`, "arithmetic is not supported"},
		{`obj.enabled ? true : false`, "ternary operator is not supported"},
		{`type(obj.count) == int`, "type checks and conversions are not supported"},
		{`string(obj.count) == "3"`, "type checks and conversions are not supported"},
		{`int(obj.description) == 3`, "type checks and conversions are not supported"},
		{`obj.description.matches("^w")`, "regular expressions are not supported"},
		{`["a"] in obj.acl`, "list-in-list is not supported"},
		{`obj.acl in ["a"]`, "list-in-list is not supported"},
		{`"a" in "abc"`, "the right side of in must be a list literal or a list field"},
		{`"a" in {"a": 1}`, "the right side of in must be a list literal or a list field"},
		{`obj.acl.exists(a, a == "x")`, "macros such as exists() are not supported"},
		{`obj.acl.all(a, a == "x")`, "macros such as all() are not supported"},
		{`size(obj.acl.map(a, a)) == 1`, "macros such as map() are not supported"},
		{`size(obj.acl.filter(a, a == "x")) == 1`, "macros such as filter() are not supported"},
		{`has(obj.description)`, "macros such as has() are not supported"},
		{`obj.description.lowerAscii() == "x"`, "function lowerAscii() is not supported"},
		{`obj.description`, "the filter must be a boolean expression, not string"},
		{`obj.count`, "the filter must be a boolean expression, not int"},
		{`obj.created_at == 1`, "no matching overload for '_==_' applied to '(timestamp, int)'"},
		{`obj.created_at > "2025-01-01T00:00:00Z"`, "no matching overload"},
		{`obj.description == 1`, "no matching overload"},
		{`obj.count == "3"`, "no matching overload"},
		{`size(obj.created_at) == 1`, "no matching overload"},
		{`obj.description in [1, 2]`, "no matching overload"},
		{`obj.acl.startsWith("bind")`, "no matching overload"},
		{`obj.id.startsWith("cr_")`, "startsWith() is not allowed on the high-entropy field obj.id"},
		{`obj.id.contains("abc")`, "contains() is not allowed on the high-entropy field obj.id"},
		{`obj.id.endsWith("xyz")`, "endsWith() is not allowed on the high-entropy field obj.id"},
		{`"cr_2abcdef".contains(obj.id)`, "contains() is not allowed on the high-entropy field obj.id"},
		{`obj.owner_id.startsWith("usr_")`, "high-entropy field obj.owner_id"},
		{`obj.certificate.id.startsWith("cert_")`, "high-entropy field obj.certificate.id"},
		{`obj.created_at > timestamp(time.now).subtract("7x")`, `subtract() takes a duration literal such as "7d"`},
		{`obj.created_at > timestamp(time.now).add("")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add("7")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add("d")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add("1.5h")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add("-1h")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add("99999999999999999999d")`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add(obj.description)`, `add() takes a duration literal`},
		{`obj.created_at > timestamp(time.now).add(7)`, `add() takes a duration literal`},
		{`obj.count < null`, "null can only be compared with a field"},
		{`"a" == null`, "null can only be compared with a field"},
		{`obj.description in [null]`, "null can only be compared with a field"},
		{`null == null`, "null can only be compared with a field"},
		{`obj.description == b"x"`, "bytes literals are not supported"},
		{`{"a": 1}.a == 1`, "field selection is only supported on obj"},
		{`obj.description == "a" &&`, "Syntax error"},
		{strings.Repeat("x", 5000), "expression code point size exceeds limit"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.expr, fields)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("Compile(%s) = %v, want an *Error", tt.expr, err)
			continue
		}
		if !strings.Contains(fe.Msg, tt.msg) || fe.Error() != fe.Msg {
			t.Errorf("Compile(%s) = %q, want it to contain %q", tt.expr, fe.Msg, tt.msg)
		}
	}
}

func TestErrorPosition(t *testing.T) {
	_, err := Compile(`obj.description == "a" && obj.acl[0] == "b"`, fields)
	if err == nil || !strings.HasSuffix(err.Error(), "(at column 34)") {
		t.Errorf("got %v, want the column of the index access", err)
	}
}

// Objects that do not fit the declared types are a server bug, reported by Match.
func TestMatchBadObject(t *testing.T) {
	for _, doc := range []string{
		`{"description": 3}`,
		`{"created_at": "yesterday"}`,
		`{"acl": ["a", 1]}`,
		`{"acl": "a"}`,
		`{"ip_policy": {"uri": "x"}}`,
	} {
		p, err := Compile(`obj.description == "x" || obj.created_at == timestamp(time.now) || "a" in obj.acl || obj.ip_policy == "x"`, fields)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := p.MatchAt(decode(t, doc), now); err == nil || ok {
			t.Errorf("%s: got %v, %v; want an error", doc, ok, err)
		}
	}
}

func TestUnknownTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a field of unknown type")
		}
	}()
	Compile(`true`, Fields{"x": Type(99)})
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "24h": 24 * time.Hour, "15m": 15 * time.Minute, "30s": 30 * time.Second,
		"1d12h": 36 * time.Hour, "1h30m15s": time.Hour + 30*time.Minute + 15*time.Second, "0s": 0,
	} {
		if got, ok := parseDuration(s); !ok || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
}

func TestConcurrentMatch(t *testing.T) {
	p, err := Compile(`obj.description == "web" && obj.created_at > timestamp(time.now).subtract("7d")`, fields)
	if err != nil {
		t.Fatal(err)
	}
	obj := decode(t, full)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if ok, err := p.MatchAt(obj, now); !ok || err != nil {
					t.Errorf("got %v, %v", ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestMatchUsesTheClock(t *testing.T) {
	p, err := Compile(`obj.created_at > timestamp(time.now).subtract("1h")`, Fields{"created_at": Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	fresh := map[string]any{"created_at": time.Now().UTC().Format(time.RFC3339)}
	if ok, err := p.Match(fresh); !ok || err != nil {
		t.Errorf("Match(fresh) = %v, %v", ok, err)
	}
}

func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile(`obj.description in ["web", "db"] && obj.created_at > timestamp(time.now).subtract("7d")`, fields); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	p, err := Compile(`obj.description in ["web", "db"] && obj.created_at > timestamp(time.now).subtract("7d") && "bind:x.com" in obj.acl`, fields)
	if err != nil {
		b.Fatal(err)
	}
	obj := decode(b, full)
	for b.Loop() {
		if ok, err := p.MatchAt(obj, now); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
