package apiserver

import (
	"bytes"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestSpliceURIMatchesEncoding checks that the response made from a stored document's bytes
// is the one decoding, rendering and encoding it gives, for text that JSON escapes in
// different ways, and that documents it cannot splice exactly are declined.
func TestSpliceURIMatchesEncoding(t *testing.T) {
	c := &call{s: &Server{opts: Options{BaseURL: "https://warren.test/api"}}}
	texts := []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline", "<b>&amp;</b>", "ünïcødé 🚀", "sep\u2028\u2029", "ctl\x01", "{\"n\":1}"}
	spliced := 0
	for _, text := range texts {
		p := &api.IPPolicy{Meta: api.Meta{ID: "ipp_2abc", CreatedAt: "2026-01-02T03:04:05Z"}, Description: text, Metadata: text}
		rec, err := ipPolicies.record("ac_1", p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeJSON(ipPolicies.rendered(c, p, ""))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ipPolicies.view(c, nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%q: view\n%s\nwant\n%s", text, got, want)
		}
		if body, ok := spliceURI(rec.Doc, rec.ID, p.URI); ok {
			spliced++
			if !bytes.Equal(body, want) {
				t.Errorf("%q: spliced\n%s\nwant\n%s", text, body, want)
			}
		}
	}
	if spliced < 5 {
		t.Errorf("only %d of %d documents were spliced", spliced, len(texts))
	}
	for _, doc := range []string{`{"uri":"","id":"ipp_2abc"}`, `{"id":"ipp_2abcd","uri":""}`, `{"id":"ipp_2abc","uri":"x"}`, `{"id":"ipp_2abc"`, `{"id":"ipp_2abc","uri":"","d":"\u003c"}`} {
		if body, ok := spliceURI([]byte(doc), "ipp_2abc", "https://warren.test/ip_policies/ipp_2abc"); ok {
			t.Errorf("%s: spliced as %s, want declined", doc, body)
		}
	}
	if _, ok := spliceURI([]byte(`{"id":"ipp_2abc","uri":""}`), "ipp_2abc", "https://wärren.test/x"); ok {
		t.Error("a uri JSON would escape was spliced")
	}
}
