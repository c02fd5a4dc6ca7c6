package sqlstore

import (
	"fmt"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// JSON is how one database reads the members of the stored documents, for the conditions
// of List (store.Cond). The migrations index some of these expressions: an index serves a
// query only when its expression is written exactly as Text writes it, so change them
// together (TestIndexedFilters checks it).
type JSON interface {
	// Text is a member as store.Text reads it: its string, "" when absent or null, a ref's id.
	Text(path []string) string
	// Time is a member's string, NULL when absent or null.
	Time(path []string) string
	// IsNull is true when the member is absent or JSON null.
	IsNull(path []string) string
	// Has is true when the list member holds the string s.
	Has(path []string, s string) string
	// ListSize is the number of elements of a list member, 0 when absent or null.
	ListSize(path []string) string
	// Length is the number of characters of a string.
	Length(s string) string
	// StartsWith, EndsWith and Contains test strings (case-sensitively). They name each
	// operand once: an operand may be a parameter.
	StartsWith(a, b string) string
	EndsWith(a, b string) string
	Contains(a, b string) string
	// Collate follows a text operand of an ordering comparison, so that it is byte order.
	Collate() string
	// NullSafe is the comparison == (or != when not) for which NULL equals NULL only.
	NullSafe(a, b string, not bool) string
	// Param is a placeholder for a string or an int64, typed where the database needs it.
	Param(v any) string
}

// where renders c as a SQL condition, appending its parameters to args.
func (t *tx) where(c *store.Cond, args *[]any) string {
	j := t.d.JSON
	join := func(sep string) string {
		parts := make([]string, len(c.Conds))
		for i, sub := range c.Conds {
			parts[i] = t.where(sub, args)
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	switch c.Op {
	case store.OpConst:
		if c.Bool {
			return "(1 = 1)"
		}
		return "(1 = 0)"
	case store.OpAnd:
		return join(" AND ")
	case store.OpOr:
		return join(" OR ")
	case store.OpNot:
		return "(NOT " + t.where(c.Conds[0], args) + ")"
	case store.OpIsNull:
		return "(" + j.IsNull(c.Path) + ")"
	case store.OpHas:
		return "(" + j.Has(c.List2.Path, t.value(c.Left, args)) + ")"
	case store.OpStartsWith:
		return "(" + j.StartsWith(t.value(c.Left, args), t.value(c.Right, args)) + ")"
	case store.OpEndsWith:
		return "(" + j.EndsWith(t.value(c.Left, args), t.value(c.Right, args)) + ")"
	case store.OpContains:
		return "(" + j.Contains(t.value(c.Left, args), t.value(c.Right, args)) + ")"
	case store.OpIn:
		if len(c.List) == 0 {
			return "(1 = 0)"
		}
		if nullable(c.Left) || nullable(c.List...) {
			// Element by element: "in" is ==, for which an absent timestamp equals nothing.
			// Left is rendered again each time, so that its parameters follow the text.
			ors := make([]string, len(c.List))
			for i, v := range c.List {
				ors[i] = j.NullSafe(t.value(c.Left, args), t.value(v, args), false)
			}
			return "(" + strings.Join(ors, " OR ") + ")"
		}
		left := t.value(c.Left, args)
		parts := make([]string, len(c.List))
		for i, v := range c.List {
			parts[i] = t.value(v, args)
		}
		return "(" + left + " IN (" + strings.Join(parts, ", ") + "))"
	case store.OpCompare:
		left, right := t.value(c.Left, args), t.value(c.Right, args)
		switch c.Cmp {
		case "==", "!=":
			if nullable(c.Left, c.Right) {
				return "(" + j.NullSafe(left, right, c.Cmp == "!=") + ")"
			}
			return "(" + left + map[string]string{"==": " = ", "!=": " <> "}[c.Cmp] + right + ")"
		case "<", "<=", ">", ">=":
			if isText(c.Left) {
				left += j.Collate()
			}
			return "(" + left + " " + c.Cmp + " " + right + ")"
		}
	}
	panic(fmt.Sprintf("sqlstore: condition %+v cannot be rendered", c)) // a bug in the filter's translation
}

func (t *tx) value(v *store.Value, args *[]any) string {
	j := t.d.JSON
	switch v.Kind {
	case store.ValueConst:
		*args = append(*args, v.Const)
		return j.Param(v.Const)
	case store.ValueMember:
		switch v.Type {
		case store.Text:
			return j.Text(v.Path)
		case store.Time:
			return j.Time(v.Path)
		}
	case store.ValueSize:
		switch v.Type {
		case store.Text:
			return j.Length(j.Text(v.Path))
		case store.List:
			return j.ListSize(v.Path)
		}
	}
	panic(fmt.Sprintf("sqlstore: value %+v cannot be rendered", v))
}

// nullable: one of vs may be NULL (an absent timestamp).
func nullable(vs ...*store.Value) bool {
	for _, v := range vs {
		if v.Kind == store.ValueMember && v.Type == store.Time {
			return true
		}
	}
	return false
}

func isText(v *store.Value) bool {
	if v.Kind == store.ValueConst {
		_, ok := v.Const.(string)
		return ok
	}
	return v.Kind == store.ValueMember
}

// checkPath panics on a member name that is not a plain identifier: the paths come from the
// families' declared filter fields, never from a request, and are written into the SQL.
func checkPath(path []string) {
	for _, p := range path {
		if p == "" || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			panic(fmt.Sprintf("sqlstore: member name %q is not an identifier", p))
		}
	}
}

// SQLiteJSON reads documents with SQLite's JSON functions, from the column doc_jsonb: the
// document in SQLite's binary JSONB, written beside it by the store (Dialect.DocJSONB), so
// that a filter does not parse the document's text once per member and row (migration 00007;
// measured, the parse was two thirds of a filtered scan's CPU).
var SQLiteJSON JSON = sqliteJSON{}

type sqliteJSON struct{}

const sqliteDoc = "doc_jsonb"

func (sqliteJSON) path(path []string) string {
	checkPath(path)
	return "'$." + strings.Join(path, ".") + "'"
}

func (j sqliteJSON) Text(path []string) string {
	p := j.path(path)
	id := j.path(append(path[:len(path):len(path)], "id"))
	return fmt.Sprintf("coalesce(CASE json_type(%[1]s, %[2]s) WHEN 'object' THEN json_extract(%[1]s, %[3]s) ELSE json_extract(%[1]s, %[2]s) END, '')",
		sqliteDoc, p, id)
}

func (j sqliteJSON) Time(path []string) string {
	return fmt.Sprintf("json_extract(%s, %s)", sqliteDoc, j.path(path))
}

func (j sqliteJSON) IsNull(path []string) string {
	return fmt.Sprintf("coalesce(json_type(%s, %s), 'null') = 'null'", sqliteDoc, j.path(path))
}

func (j sqliteJSON) Has(path []string, s string) string {
	return fmt.Sprintf("EXISTS (SELECT 1 FROM json_each(%s, %s) WHERE type = 'text' AND value = %s)", sqliteDoc, j.path(path), s)
}

func (j sqliteJSON) ListSize(path []string) string {
	return fmt.Sprintf("coalesce(json_array_length(%s, %s), 0)", sqliteDoc, j.path(path))
}

func (sqliteJSON) Length(s string) string { return "length(" + s + ")" }

// StartsWith: instr finds the first occurrence, and instr(a, ”) is 1.
func (sqliteJSON) StartsWith(a, b string) string { return fmt.Sprintf("instr(%s, %s) = 1", a, b) }

// EndsWith names b once through a subquery; substr(a, -0) would be all of a.
func (sqliteJSON) EndsWith(a, b string) string {
	return fmt.Sprintf("(SELECT length(x.b) = 0 OR substr(%s, -length(x.b)) = x.b FROM (SELECT %s AS b) x)", a, b)
}

func (sqliteJSON) Contains(a, b string) string { return fmt.Sprintf("instr(%s, %s) > 0", a, b) }

// Collate: SQLite compares text with memcmp (the BINARY collation) already.
func (sqliteJSON) Collate() string { return "" }

func (sqliteJSON) NullSafe(a, b string, not bool) string {
	if not {
		return a + " IS NOT " + b
	}
	return a + " IS " + b
}

func (sqliteJSON) Param(any) string { return "?" }

// PostgresJSON reads documents with PostgreSQL's jsonb operators, from the column doc_jsonb:
// the document as jsonb, generated from it (migration 00007), so that a filter does not parse
// the document's text once per member and row. Every expression is written inline (a SQL
// function that names its argument more than once is not inlined, and calling it per row
// cost more than the reading itself, measured).
var PostgresJSON JSON = postgresJSON{}

type postgresJSON struct{}

func (postgresJSON) member(path []string) string {
	checkPath(path)
	return "(doc_jsonb #> '{" + strings.Join(path, ",") + "}')"
}

// Text: a ref (an object) reads as its id, any other value as its text, absent or null as "".
func (j postgresJSON) Text(path []string) string {
	m := j.member(path)
	return fmt.Sprintf("coalesce(CASE jsonb_typeof(%[1]s) WHEN 'object' THEN %[1]s ->> 'id' ELSE %[1]s #>> '{}' END, '')", m)
}

func (postgresJSON) Time(path []string) string {
	checkPath(path)
	return "(doc_jsonb #>> '{" + strings.Join(path, ",") + "}')"
}

func (j postgresJSON) IsNull(path []string) string {
	return "coalesce(jsonb_typeof" + j.member(path) + ", 'null') = 'null'"
}

func (j postgresJSON) Has(path []string, s string) string {
	return fmt.Sprintf("coalesce(%s @> jsonb_build_array(%s), false)", j.member(path), s)
}

func (j postgresJSON) ListSize(path []string) string {
	m := j.member(path)
	return fmt.Sprintf("coalesce(jsonb_array_length(CASE WHEN jsonb_typeof(%[1]s) = 'array' THEN %[1]s END), 0)", m)
}

func (postgresJSON) Length(s string) string { return "char_length(" + s + ")" }

func (postgresJSON) StartsWith(a, b string) string { return fmt.Sprintf("starts_with(%s, %s)", a, b) }

func (postgresJSON) EndsWith(a, b string) string {
	return fmt.Sprintf("starts_with(reverse(%s), reverse(%s))", a, b)
}

func (postgresJSON) Contains(a, b string) string { return fmt.Sprintf("strpos(%s, %s) > 0", a, b) }

func (postgresJSON) Collate() string { return ` COLLATE "C"` }

func (postgresJSON) NullSafe(a, b string, not bool) string {
	if not {
		return a + " IS DISTINCT FROM " + b
	}
	return a + " IS NOT DISTINCT FROM " + b
}

func (postgresJSON) Param(v any) string {
	if _, ok := v.(int64); ok {
		return "CAST(? AS BIGINT)"
	}
	return "CAST(? AS TEXT)"
}
