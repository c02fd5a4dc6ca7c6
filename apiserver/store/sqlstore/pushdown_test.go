package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

func TestMain(m *testing.M) { os.Exit(pgcluster.RunTests(m)) }

// now is time.now in every filter of the tests: fixed, so both paths see the same instant.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

const account = "acc_1"

// TestPushdownSQLite and TestPushdownPostgres check, for every filterable field of every
// list, that the database selects exactly the objects that CEL matches in Go.
func TestPushdownSQLite(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	differential(t, db)
}

func TestPushdownPostgres(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgcluster.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	differential(t, db)
}

func differential(t *testing.T, db store.Store) {
	ctx := context.Background()
	lists := apiserver.FilterLists()
	if len(lists) < 10 {
		t.Fatalf("only %d filterable lists", len(lists))
	}
	var exactCount, total int
	for i, l := range lists {
		kind := fmt.Sprintf("k%d_%s", i, l.Kind) // lists that share a kind get their own objects
		docs := seed(t, db, kind, l.Fields, rand.New(rand.NewPCG(uint64(i), 1)))
		for _, expr := range filters(l.Fields, rand.New(rand.NewPCG(uint64(i), 2))) {
			prog, err := filter.Compile(expr, l.Fields)
			if err != nil {
				continue // outside the subset for this field (startsWith on an ID); the filter refuses it
			}
			total++
			want := celMatches(t, prog, docs)
			cond, exact := prog.Pushdown(now)
			var selected []*store.Object
			err = db.Read(ctx, func(tx store.Tx) error {
				var err error
				selected, err = tx.List(ctx, store.ListQuery{Kind: kind, AccountID: account, Where: cond})
				return err
			})
			if err != nil {
				t.Fatalf("%s: %s: %v", l.Path, expr, err)
			}
			var got []string
			for _, o := range selected {
				if exact {
					got = append(got, o.ID)
				} else if ok, err := prog.MatchAt(decode(t, o.Doc), now); err != nil {
					t.Fatal(err)
				} else if ok {
					got = append(got, o.ID)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s (exact %v): SQL selects %v, CEL matches %v", l.Path, expr, exact, got, want)
			}
			if exact {
				exactCount++
			} else if len(selected) < len(want) {
				t.Errorf("%s: %s: the pushed-down part selects fewer objects than match", l.Path, expr)
			}
			if wantExact := !slices.ContainsFunc(goSide, func(a string) bool { return strings.Contains(expr, a) }); exact != wantExact {
				t.Errorf("%s: %s: exact = %v, want %v", l.Path, expr, exact, wantExact)
			}
		}
	}
	t.Logf("%d filters over %d lists, %d of them evaluated in the database alone", total, len(lists), exactCount)
}

// goSide are the atoms left to CEL (list equality, a timestamp with a fraction of a second):
// a filter that holds one is not exact.
var goSide = []string{`.5Z")`, `== ["a"]`}

// seed stores objects whose documents give every filterable field present, absent and null
// values, refs and nested members, and returns their documents newest first.
func seed(t *testing.T, db store.Store, kind string, fields filter.Fields, r *rand.Rand) map[string]map[string]any {
	strs := []any{"", "a", "ab", "b", "ba", "é", "A", "a b", map[string]any{"id": "a", "uri": "u"}, map[string]any{"id": "b"}}
	times := []any{"2025-01-01T00:00:00Z", "2025-05-31T13:00:00Z", "2025-06-01T12:00:00Z", "2030-01-01T00:00:00Z", "0001-01-01T00:00:00Z"}
	lists := []any{[]any{}, []any{"a"}, []any{"a", "b"}, []any{"b", "ab"}}
	docs := map[string]map[string]any{}
	err := db.Write(context.Background(), func(tx store.Tx) error {
		for n := range 60 {
			doc := map[string]any{}
			for name, typ := range fields {
				pool := map[filter.Type][]any{filter.String: strs, filter.Timestamp: times, filter.StringList: lists}[typ]
				switch k := r.IntN(len(pool) + 2); {
				case k == len(pool): // absent
				case k == len(pool)+1:
					set(doc, name, nil)
				default:
					if name == "id" {
						set(doc, name, fmt.Sprintf("x_%03d", n))
						continue
					}
					set(doc, name, pool[k])
				}
			}
			raw, _ := json.Marshal(doc)
			id := fmt.Sprintf("%s_%03d", kind, n)
			docs[id] = roundTrip(t, doc) // as the server's list decodes it (nested maps)
			if err := tx.Insert(context.Background(), &store.Object{Kind: kind, ID: id, AccountID: account, Doc: raw}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// set puts v at a dotted path, making the objects on the way.
func set(doc map[string]any, name string, v any) {
	parts := strings.Split(name, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := doc[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			doc[p] = next
		}
		doc = next
	}
	doc[parts[len(parts)-1]] = v
}

// filters returns atoms on every field and combinations of them.
func filters(fields filter.Fields, r *rand.Rand) []string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var atoms []string
	for _, n := range names {
		f := "obj." + n
		switch fields[n] {
		case filter.String:
			atoms = append(atoms, f+` == "a"`, f+` != "a"`, f+` == ""`, f+` < "b"`, f+` >= "ab"`, `"b" > `+f,
				f+` in ["a", "b", "é"]`, f+` in []`, f+` == null`, f+` != null`, `size(`+f+`) > 1`, f+`.size() == 0`,
				f+`.startsWith("a")`, f+`.endsWith("b")`, f+`.contains("b")`, f+`.startsWith("")`, f+`.endsWith("")`,
				`"xab".endsWith(`+f+`)`, f+` == `+f)
		case filter.Timestamp:
			atoms = append(atoms, f+` == timestamp("2025-01-01T00:00:00Z")`, f+` != timestamp("2025-01-01T00:00:00Z")`,
				f+` < timestamp("2025-06-01T12:00:00Z")`, f+` >= timestamp("2025-05-31T13:00:00Z")`,
				f+` > timestamp(time.now).subtract("1d")`, f+` <= timestamp(time.now).add("1h")`,
				f+` in [timestamp("2025-01-01T00:00:00Z"), timestamp("2030-01-01T01:00:00+01:00")]`,
				f+` == null`, f+` != null`, f+` == `+f, `timestamp("2026-01-01T00:00:00Z") > `+f,
				f+` < timestamp("2025-06-01T12:00:00.5Z")`)
		case filter.StringList:
			atoms = append(atoms, `"a" in `+f, `"ab" in `+f, `size(`+f+`) == 0`, `size(`+f+`) >= 2`, f+` == null`,
				f+` == ["a"]`)
		}
	}
	out := slices.Clone(atoms)
	pick := func() string { return atoms[r.IntN(len(atoms))] }
	for range len(atoms) / 2 {
		a, b, c := pick(), pick(), pick()
		out = append(out, "("+a+") && ("+b+")", "("+a+") || ("+b+")", "!("+a+")", "!(("+a+") || ("+b+")) && ("+c+")")
	}
	return out
}

func celMatches(t *testing.T, prog *filter.Program, docs map[string]map[string]any) []string {
	var ids []string
	for id, doc := range docs {
		ok, err := prog.MatchAt(doc, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids) // newest first, as List
	return ids
}

func roundTrip(t *testing.T, doc map[string]any) map[string]any {
	raw, _ := json.Marshal(doc)
	return decode(t, raw)
}

func decode(t *testing.T, raw []byte) map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestIndexedFilters checks that the indexes of migration 00004 serve the equality filters
// they are for: their expressions must be the ones that JSON.Text writes.
func TestIndexedFilters(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func() (*sqlstore.Store, error)
		json sqlstore.JSON
		plan string // EXPLAIN, with a %s for the query
	}{
		{"sqlite", func() (*sqlstore.Store, error) { return sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db")) },
			sqlstore.SQLiteJSON, "EXPLAIN QUERY PLAN %s"},
		{"postgres", func() (*sqlstore.Store, error) { return postgres.Open(ctx, pgcluster.Database(t)) },
			sqlstore.PostgresJSON, "EXPLAIN %s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := tc.open()
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Write(ctx, func(tx store.Tx) error {
				for n := range 500 {
					doc := fmt.Sprintf(`{"metadata":"m%d","owner_id":"usr_%d"}`, n, n%7)
					if err := tx.Insert(ctx, &store.Object{Kind: "api_key", ID: fmt.Sprintf("ak_%04d", n), AccountID: account, Doc: []byte(doc)}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := db.DB()
			if tc.name == "postgres" {
				if _, err := w.ExecContext(ctx, "ANALYZE objects"); err != nil {
					t.Fatal(err)
				}
			}
			for _, member := range []string{"metadata", "owner_id"} {
				query := fmt.Sprintf("SELECT id FROM objects WHERE account_id = '%s' AND kind = 'api_key' AND parent_id = '' AND %s = 'x' ORDER BY id DESC LIMIT 10",
					account, tc.json.Text([]string{member}))
				rows, err := w.QueryContext(ctx, fmt.Sprintf(tc.plan, query))
				if err != nil {
					t.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					cols, _ := rows.Columns()
					vals := make([]any, len(cols))
					for i := range vals {
						vals[i] = new(any)
					}
					if err := rows.Scan(vals...); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, fmt.Sprint(*vals[len(vals)-1].(*any)))
				}
				rows.Close()
				if !strings.Contains(strings.Join(plan, "\n"), "objects_"+member) {
					t.Errorf("a filter on %s does not use its index:\n%s", member, strings.Join(plan, "\n"))
				}
			}
		})
	}
}
