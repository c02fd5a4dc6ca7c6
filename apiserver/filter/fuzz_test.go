package filter

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzFilter compiles any expression against the test fields and matches it against the two
// test objects and one fuzzed object: nothing panics, a refusal is an *Error (a 400), and a
// compiled filter matches the fixed objects without error (they fit the fields).
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		`true`, `obj.description == "web" && obj.enabled`, `obj.description == null`, `null == obj.description`,
		`"bind:x.com" in obj.acl`, `size(obj.acl) == 2`, `obj.metadata.contains("prod")`,
		`obj.created_at > timestamp(time.now).subtract("7d")`, `obj.created_at.add("5d") == timestamp(time.now)`,
		`obj.not_after < timestamp(time.now) || obj.id == "cr_2abc"`, `obj.certificate.id == "cert_9"`,
		`obj.count >= -1`, `obj.description in ["web", "db"]`, `obj.created_at > timestamp("2025-01-01T00:00:00Z")`,
		// Refused ones.
		``, `obj.description ==`, `obj.id.startsWith("cr_")`, `obj.nope == 1`, `obj.count == "3"`, `1 + 1`,
		`obj.acl.exists(x, x == "a")`, `has(obj.description)`, `null == null`, `obj.created_at.add("7x")`,
		`timestamp("not a time") < obj.created_at`, `obj.created_at.add(obj.description) < timestamp(time.now)`,
		`obj.count / 0 == 1`, `9223372036854775807 + obj.count > 0`, `((((((((((true))))))))))`, `"\xff" == obj.id`,
	} {
		f.Add(s, []byte(full))
	}
	f.Add(`obj.description == "web"`, []byte(`{"description": 1, "acl": "x", "count": 1.5, "created_at": "yesterday"}`))
	f.Add(`obj.count > 1 && obj.enabled && size(obj.acl) > 0`, []byte(`{"count": 1e300, "enabled": "yes", "acl": [1]}`))
	f.Add(`obj.certificate.id == "x"`, []byte(`{"certificate": "x"}`))
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		p, err := Compile(expr, fields)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("Compile(%q): %v (%T) is not an *Error with a message", expr, err, err)
			}
			return
		}
		got := make([]bool, 2)
		for i, obj := range []string{full, sparse} {
			if got[i], err = p.MatchAt(decode(t, obj), now); err != nil {
				t.Fatalf("%q on a well-formed object: %v", expr, err)
			}
		}
		// An object that does not fit the fields may make Match fail, never panic.
		var m map[string]any
		if json.Unmarshal(doc, &m) == nil {
			_, _ = p.MatchAt(m, now)
		}
		// Wrapping a filter in a conjunction with true changes nothing.
		if wrapped, err := Compile("(\n"+expr+"\n) && true", fields); err == nil {
			for i, obj := range []string{full, sparse} {
				if w, _ := wrapped.MatchAt(decode(t, obj), now); w != got[i] {
					t.Fatalf("%q matches object %d: %v, but (%q) && true: %v", expr, i, got[i], expr, w)
				}
			}
		}
	})
}
