package sqlstore

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// TestPagesPrepared checks that a page to render without a filter, first or next, is one of
// the statements a preparing dialect keeps prepared, and that elsewhere the kind stays a
// literal (a plan may then pick a partial index of that kind).
func TestPagesPrepared(t *testing.T) {
	s := New(nil, nil, Dialect{Prepare: true})
	texts := s.hotQueryTexts()
	stmts := map[string]*sql.Stmt{}
	for _, q := range texts {
		stmts[q] = nil
	}
	prepared := &tx{d: &s.dialect, stmts: stmts}
	unprepared := &tx{d: &s.dialect}
	for _, q := range []store.ListQuery{
		{Kind: "ip_policy", AccountID: "ac_1", Limit: 101, DocsOnly: true},
		{Kind: "ip_policy", AccountID: "ac_1", BeforeID: "ipp_2", Limit: 101, DocsOnly: true},
	} {
		query, args := prepared.listSQL(q)
		if !slices.Contains(texts, query) {
			t.Errorf("%+v: %q is not prepared", q, query)
		}
		if !slices.Contains(args, any(q.Kind)) {
			t.Errorf("%+v: the kind is not an argument: %v", q, args)
		}
		if query, _ := unprepared.listSQL(q); !strings.Contains(query, "o.kind = 'ip_policy'") {
			t.Errorf("%+v without prepared statements: %q, want the kind as a literal", q, query)
		}
	}
	q := store.ListQuery{Kind: "ip_policy", AccountID: "ac_1", Limit: 101}
	if query, _ := prepared.listSQL(q); slices.Contains(texts, query) || !strings.Contains(query, "o.kind = 'ip_policy'") {
		t.Errorf("a list with keys and refs: %q", query)
	}
}
