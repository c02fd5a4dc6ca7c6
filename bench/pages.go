package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

var pagesSection = section{
	name:  "pages",
	title: "List pages against the size of the account",
	run:   runPages,
}

// pagesRequest is one list request the section times.
type pagesRequest struct {
	name   string
	filter func(n int) string // "" for none; n is the account's size
}

var pagesRequests = []pagesRequest{
	{"first page", func(int) string { return "" }},
	{"filter on metadata (indexed), 1 match", func(n int) string { return fmt.Sprintf(`obj.metadata == "tag-%d"`, n/2) }},
	{"filter on description, 1 match", func(n int) string { return fmt.Sprintf(`obj.description == "policy %d"`, n/2) }},
	{"broad filter, every object matches", func(int) string { return `obj.description.startsWith("policy")` }},
}

func runPages(ctx context.Context, e *env) (*result, error) {
	sizes := size(e, []int{100, 10_000, 100_000}, []int{100, 1_000})
	res := &result{Intro: fmt.Sprintf("GET /ip_policies (first page of 100, newest first) and filtered pages, "+
		"one request at a time, in an account holding %v IP policies (seeded through the store as Warren writes them). "+
		"The floor is the path before this change: the filter evaluated by CEL in Go over the account's objects "+
		"read in batches of 200 until the page is full. Both selections are timed in-process, without HTTP and rendering, "+
		"beside the whole request over HTTP.", sizes)}
	for _, dbKind := range []string{onSQLite, onPostgres} {
		tab, findings, err := pagesOn(ctx, e, dbKind, sizes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dbKind, err)
		}
		res.Tables = append(res.Tables, tab)
		res.Findings = append(res.Findings, findings...)
	}
	res.Findings = append(res.Findings,
		"The filter is translated from CEL's checked AST to SQL over the stored JSON documents; "+
			"whatever does not translate exactly (list equality, a timestamp with a fraction of a second) is evaluated by CEL over the rows the database selected.",
		"metadata and owner_id have expression indexes: an equality filter on them reads the matches only. "+
			"A filter on another member (description) visits every object of the account in the database, so its cost follows the account's size.",
		"Fixed: the members are read from a binary JSON copy kept beside each document (doc_jsonb, migration 00007: jsonb generated from the document on PostgreSQL, "+
			"JSONB written by the store on SQLite) instead of parsing the document's text once per member and row, and on PostgreSQL inline instead of through a SQL function "+
			"that was not inlined. Measured before and after on the same loaded 2-core machine, at 100 000 objects, the selective filter against CEL in Go: "+
			"PostgreSQL 3.2× → 28× with both runs side by side, 5.0× → 35× each run alone; SQLite 3.8× → 3.7× side by side, 1.7× → 6.0× alone (SQL selection 719 → 226 ms). "+
			"The function's default cost estimate also made PostgreSQL's planner pick a parallel plan, whose workers' start-up cost the broad filter 118 to 175 ms at 100 000 objects "+
			"(statistics were fresh: the seeder runs ANALYZE); read inline, the plan is a plain index walk stopped by the LIMIT, 2 ms.",
		"What stands in the way on SQLite: the selective filter on description stays short of 10× faster than CEL in Go (the ratios above; 4.6× to 6× at 100 000 objects across runs so far). "+
			"Measured in-process by CPU time over 100 000 rows, the bare index walk costs 50 ms, the walk reading description from JSONB 80 ms (from the text it was 150 ms): "+
			"what is left is visiting every row of the account in modernc's SQLite. Meeting 10× there takes an index on the member "+
			"(an expression index per filtered member, paid on every write), not a cheaper reading of it.")
	return res, nil
}

func pagesOn(ctx context.Context, e *env, dbKind string, sizes []int) (table, []string, error) {
	tab := table{
		Caption: dbKind + ": median and p99 per request over HTTP; then the page's selection alone, in-process, at the median: " +
			"in SQL now, by CEL in Go before (the floor), and their ratio.",
		Header: []string{"Objects", "Request", "HTTP p50", "HTTP p99", "Selection in SQL", "CEL in Go", "Speed-up"},
	}
	db, err := e.openStore(ctx, dbKind)
	if err != nil {
		return tab, nil, err
	}
	w, err := e.startWarren(ctx, db, noRateLimit)
	if err != nil {
		db.Close()
		return tab, nil, err
	}
	defer w.Close()
	s, err := newSeeder(ctx, w)
	if err != nil {
		return tab, nil, err
	}
	s.analyze = dbKind == onPostgres
	client := newHTTPClient(1)
	p50s := map[string]map[int]time.Duration{} // request → size → p50
	var findings []string
	speedups := map[string][]string{}
	for _, n := range sizes {
		e.logf("pages on %s: %d objects", dbKind, n)
		if err := s.growTo(ctx, n); err != nil {
			return tab, nil, err
		}
		for _, req := range pagesRequests {
			expr := req.filter(n)
			u := w.URL + s.path
			if expr != "" {
				u += "?" + url.Values{"filter": {expr}}.Encode()
			}
			warren, err := timeRepeated(ctx, e, func() error {
				_, err := call(ctx, client, http.MethodGet, u, w.Token, "", 200)
				return err
			})
			if err != nil {
				return tab, nil, err
			}
			row := []string{fmt.Sprint(n), req.name, ms(warren.p50), ms(warren.p99), "", "", ""}
			if expr != "" {
				prog, err := filter.Compile(expr, s.fields)
				if err != nil {
					return tab, nil, err
				}
				sel, err := timeRepeated(ctx, e, func() error { return s.page(ctx, prog, true) })
				if err != nil {
					return tab, nil, err
				}
				old, err := timeRepeated(ctx, e, func() error { return s.page(ctx, prog, false) })
				if err != nil {
					return tab, nil, err
				}
				row[4], row[5], row[6] = ms(sel.p50), ms(old.p50), ratio(float64(old.p50), float64(sel.p50))
				speedups[req.name] = append(speedups[req.name], fmt.Sprintf("%s at %d", ratio(float64(old.p50), float64(sel.p50)), n))
			}
			tab.Rows = append(tab.Rows, row)
			if p50s[req.name] == nil {
				p50s[req.name] = map[int]time.Duration{}
			}
			p50s[req.name][n] = warren.p50
		}
	}
	lo, hi := sizes[0], sizes[len(sizes)-1]
	for _, req := range pagesRequests {
		f := fmt.Sprintf("%s, %s: over HTTP, %d objects cost %s of %d objects at the median (flat is 1×)",
			dbKind, req.name, hi, ratio(float64(p50s[req.name][hi]), float64(p50s[req.name][lo])), lo)
		if sp := speedups[req.name]; len(sp) > 0 {
			f += "; selection in SQL against CEL in Go: " + strings.Join(sp, ", ")
		}
		findings = append(findings, f+".")
	}
	return tab, findings, nil
}

// timing is the median and the 99th percentile of repeated runs.
type timing struct{ p50, p99 time.Duration }

// timeRepeated runs fn one after the other: 200 times (5 in quick mode), or fewer when that
// takes more than 5 s, but at least 3 times.
func timeRepeated(ctx context.Context, e *env, fn func() error) (timing, error) {
	reps, budget := size(e, 200, 5), size(e, 5*time.Second, 50*time.Millisecond)
	var ds []time.Duration
	start := time.Now()
	for len(ds) < reps && (len(ds) < 3 || time.Since(start) < budget) {
		if err := ctx.Err(); err != nil {
			return timing{}, err
		}
		t := time.Now()
		if err := fn(); err != nil {
			return timing{}, err
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return timing{percentile(ds, 0.5), percentile(ds, 0.99)}, nil
}

// seeder fills the bootstrapped account with IP policies straight through the store: the
// document of one policy created over HTTP, with a new ID, description and metadata each.
type seeder struct {
	db       store.Store
	path     string        // the list's path
	template *store.Object // what Warren stored for the policy created over HTTP
	doc      map[string]any
	fields   filter.Fields
	n        int // policies in the account
	// analyze updates PostgreSQL's statistics after seeding, as autovacuum does for a
	// database that grew over time: without them the planner takes the account for small.
	analyze bool
}

func newSeeder(ctx context.Context, w *warren) (*seeder, error) {
	s := &seeder{db: w.Store, path: "/ip_policies", n: 1}
	for _, l := range apiserver.FilterLists() {
		if l.Path == s.path {
			s.fields = l.Fields
		}
	}
	body, err := call(ctx, http.DefaultClient, http.MethodPost, w.URL+s.path, w.Token, `{"description":"policy 0","metadata":"tag-0"}`, 201)
	if err != nil {
		return nil, err
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		return nil, err
	}
	err = w.Store.Read(ctx, func(tx store.Tx) error {
		s.template, err = tx.Get(ctx, "ip_policy", created.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(s.template.UniqueKeys) > 0 {
		return nil, fmt.Errorf("an IP policy claims unique keys %v: the seeder would have to make them", s.template.UniqueKeys)
	}
	return s, json.Unmarshal(s.template.Doc, &s.doc)
}

// growTo adds policies, a thousand per transaction, until the account holds n.
func (s *seeder) growTo(ctx context.Context, n int) error {
	for s.n < n {
		batch := min(1000, n-s.n)
		err := s.db.Write(ctx, func(tx store.Tx) error {
			for i := range batch {
				doc := maps.Clone(s.doc)
				o := *s.template
				o.ID = ids.New(ids.IPPolicy)
				doc["id"], doc["description"], doc["metadata"] = o.ID, fmt.Sprintf("policy %d", s.n+i), fmt.Sprintf("tag-%d", s.n+i)
				raw, err := json.Marshal(doc)
				if err != nil {
					return err
				}
				o.Doc = raw
				if err := tx.Insert(ctx, &o); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		s.n += batch
	}
	if !s.analyze {
		return nil
	}
	w, _ := s.db.(*sqlstore.Store).DB()
	_, err := w.ExecContext(ctx, "ANALYZE objects")
	return err
}

// page selects one filtered page of 100 in-process, newest first, as the server does (the
// filter pushed down to SQL, what does not translate matched by CEL) or, when !inSQL, as it
// did before: batches of 200 objects, each decoded and matched by CEL, until 101 match.
func (s *seeder) page(ctx context.Context, prog *filter.Program, inSQL bool) error {
	const limit = 100
	return s.db.Read(ctx, func(tx store.Tx) error {
		q := store.ListQuery{Kind: s.template.Kind, AccountID: s.template.AccountID, Limit: 200}
		now, exact := time.Now(), false
		if inSQL {
			if q.Where, exact = prog.Pushdown(now); exact {
				q.Limit = limit + 1
			}
		}
		matched := 0
		for {
			objs, err := tx.List(ctx, q)
			if err != nil {
				return err
			}
			for _, o := range objs {
				ok := exact
				if !exact {
					var doc map[string]any
					if err := json.Unmarshal(o.Doc, &doc); err != nil {
						return err
					}
					if ok, err = prog.MatchAt(doc, now); err != nil {
						return err
					}
				}
				if ok {
					if matched++; matched > limit {
						return nil
					}
				}
			}
			if len(objs) < q.Limit {
				return nil
			}
			q.BeforeID = objs[len(objs)-1].ID
		}
	})
}
