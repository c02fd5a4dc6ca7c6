package filter

import (
	"strings"
	"time"
	"unicode/utf8"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Pushdown translates the checked filter into a condition the database evaluates over the
// stored documents (store.Cond), with time.now bound to now.
//
// When exact is true the condition selects exactly the objects that MatchAt(obj, now)
// matches. Otherwise it selects a superset of them (nil: every object), and the caller runs
// MatchAt over what it returns: a part that cannot be translated with the same meaning is
// left to CEL. Conjunctions keep their translatable operands; a disjunction or a negation is
// pushed only when its operands are (exactly, for a negation).
//
// CEL's evaluation errors (ordering an absent timestamp) behave as SQL's NULL in && || and !
// (false && error is false, true || error is true, !error is an error) and make the object
// not match, as NULL does not select a row: the translation relies on that.
func (p *Program) Pushdown(now time.Time) (c *store.Cond, exact bool) {
	t := pushdown{p: p, now: now}
	c, exact = t.cond(p.checked.Expr())
	if c.Op == store.OpConst && c.Bool && !exact {
		return nil, false
	}
	return c, exact
}

type pushdown struct {
	p   *Program
	now time.Time
}

var everything = &store.Cond{Op: store.OpConst, Bool: true}

// cond translates a boolean expression. When it cannot, it returns everything, inexact.
func (t pushdown) cond(e ast.Expr) (*store.Cond, bool) {
	switch e.Kind() {
	case ast.LiteralKind:
		if b, ok := e.AsLiteral().(types.Bool); ok {
			return &store.Cond{Op: store.OpConst, Bool: bool(b)}, true
		}
	case ast.IdentKind, ast.SelectKind:
		if v, ok := t.p.vars[qualifiedName(e)]; ok && v.isNull {
			return &store.Cond{Op: store.OpIsNull, Path: v.path}, true
		}
	case ast.CallKind:
		return t.call(e)
	}
	return everything, false
}

func (t pushdown) call(e ast.Expr) (*store.Cond, bool) {
	call := e.AsCall()
	fn, args := call.FunctionName(), call.Args()
	if call.IsMemberFunction() {
		args = append([]ast.Expr{call.Target()}, args...)
	}
	switch fn {
	case operators.LogicalAnd, operators.LogicalOr:
		op := map[string]store.CondOp{operators.LogicalAnd: store.OpAnd, operators.LogicalOr: store.OpOr}[fn]
		c, exact := &store.Cond{Op: op}, true
		for _, a := range args {
			sub, ok := t.cond(a)
			c.Conds, exact = append(c.Conds, sub), exact && ok
		}
		return c, exact
	case operators.LogicalNot:
		if sub, ok := t.cond(args[0]); ok {
			return &store.Cond{Op: store.OpNot, Conds: []*store.Cond{sub}}, true
		}
	case operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals,
		operators.Greater, operators.GreaterEquals:
		if !t.scalar(args[0]) || !t.scalar(args[1]) {
			break
		}
		l, lok := t.value(args[0])
		r, rok := t.value(args[1])
		if lok && rok {
			return &store.Cond{Op: store.OpCompare, Cmp: cmpOps[fn], Left: l, Right: r}, true
		}
	case operators.In:
		l, ok := t.value(args[0])
		if !ok || !t.scalar(args[0]) {
			break
		}
		if args[1].Kind() == ast.ListKind {
			c := &store.Cond{Op: store.OpIn, Left: l}
			for _, el := range args[1].AsList().Elements() {
				v, ok := t.value(el)
				if !ok || !t.scalar(el) {
					return everything, false
				}
				c.List = append(c.List, v)
			}
			return c, true
		}
		if list, ok := t.value(args[1]); ok && list.Kind == store.ValueMember && list.Type == store.List {
			return &store.Cond{Op: store.OpHas, Left: l, List2: list}, true
		}
	case "startsWith", "endsWith", "contains":
		l, lok := t.value(args[0])
		r, rok := t.value(args[1])
		if lok && rok {
			op := map[string]store.CondOp{"startsWith": store.OpStartsWith, "endsWith": store.OpEndsWith, "contains": store.OpContains}[fn]
			return &store.Cond{Op: op, Left: l, Right: r}, true
		}
	}
	return everything, false
}

var cmpOps = map[string]string{
	operators.Equals: "==", operators.NotEquals: "!=", operators.Less: "<",
	operators.LessEquals: "<=", operators.Greater: ">", operators.GreaterEquals: ">=",
}

// scalar: e is a string, a timestamp or an int (the types whose comparisons translate).
func (t pushdown) scalar(e ast.Expr) bool {
	typ := t.p.checked.GetType(e.ID())
	return typ != nil && (typ.IsExactType(types.StringType) || typ.IsExactType(types.TimestampType) ||
		typ.IsExactType(types.IntType))
}

// value translates an operand: a member, a literal, size(), or a constant timestamp.
func (t pushdown) value(e ast.Expr) (*store.Value, bool) {
	switch e.Kind() {
	case ast.LiteralKind:
		switch v := e.AsLiteral().(type) {
		case types.String:
			// PostgreSQL's text holds no NUL; neither does any stored string there.
			if s := string(v); utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
				return &store.Value{Kind: store.ValueConst, Const: s}, true
			}
		case types.Int:
			return &store.Value{Kind: store.ValueConst, Const: int64(v)}, true
		}
	case ast.IdentKind, ast.SelectKind:
		v, ok := t.p.vars[qualifiedName(e)]
		if !ok || v.isNull {
			break
		}
		switch v.typ {
		case String:
			return &store.Value{Kind: store.ValueMember, Path: v.path, Type: store.Text}, true
		case Timestamp:
			return &store.Value{Kind: store.ValueMember, Path: v.path, Type: store.Time}, true
		case StringList:
			return &store.Value{Kind: store.ValueMember, Path: v.path, Type: store.List}, true
		}
	case ast.CallKind:
		call := e.AsCall()
		if call.FunctionName() == "size" {
			arg := call.Target()
			if !call.IsMemberFunction() {
				arg = call.Args()[0]
			}
			if m, ok := t.value(arg); ok && m.Kind == store.ValueMember && m.Type != store.Time {
				return &store.Value{Kind: store.ValueSize, Path: m.Path, Type: m.Type}, true
			}
			break
		}
		if ts, ok := t.constTime(e); ok && ts.Nanosecond() == 0 && ts.UTC().Year() >= 1 && ts.UTC().Year() <= 9999 {
			// Stored timestamps are all in this format (api.FormatTime), so text order is
			// time order; a literal with a fraction of a second is left to CEL.
			return &store.Value{Kind: store.ValueConst, Const: ts.UTC().Format(api.TimeFormat)}, true
		}
	}
	return nil, false
}

// constTime evaluates timestamp("…"), timestamp(time.now) and their add/subtract.
func (t pushdown) constTime(e ast.Expr) (time.Time, bool) {
	if e.Kind() != ast.CallKind {
		return time.Time{}, false
	}
	call := e.AsCall()
	switch call.FunctionName() {
	case "timestamp":
		if call.IsMemberFunction() || len(call.Args()) != 1 {
			break
		}
		arg := call.Args()[0]
		if arg.Kind() == ast.LiteralKind {
			if s, ok := arg.AsLiteral().(types.String); ok {
				ts, err := time.Parse(time.RFC3339, string(s))
				return ts, err == nil
			}
			break
		}
		return t.now, qualifiedName(arg) == "time.now"
	case "add", "subtract":
		if !call.IsMemberFunction() || len(call.Args()) != 1 || call.Args()[0].Kind() != ast.LiteralKind {
			break
		}
		base, ok := t.constTime(call.Target())
		s, sok := call.Args()[0].AsLiteral().(types.String)
		d, dok := parseDuration(string(s))
		if !ok || !sok || !dok {
			break
		}
		if call.FunctionName() == "subtract" {
			d = -d
		}
		return base.Add(d), true
	}
	return time.Time{}, false
}

// qualifiedName is the dotted name of an identifier or a selection chain ("obj.certificate.id";
// the checker turns resolved chains into one identifier), "" for anything else.
func qualifiedName(e ast.Expr) string {
	var parts []string
	for e.Kind() == ast.SelectKind {
		parts = append([]string{e.AsSelect().FieldName()}, parts...)
		e = e.AsSelect().Operand()
	}
	if e.Kind() != ast.IdentKind {
		return ""
	}
	return strings.Join(append([]string{e.AsIdent()}, parts...), ".")
}
