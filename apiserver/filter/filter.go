// Package filter implements the `?filter=` language of list endpoints (details.md §3.3): a
// small subset of CEL, parsed and type-checked by cel-go, in which `obj` is one resource.
//
// Each filterable field is declared to the CEL checker as its own variable "obj.<name>" with
// its precise type, so `obj.description` and `obj.certificate.id` resolve as qualified names
// and type errors are caught at Compile time. Before checking, a walk over the parsed AST
// rejects everything outside the documented subset and gives readable messages.
//
// Missing values. The API omits empty strings from its JSON, so an absent or null field takes
// the zero value of its type: "" for String, [] for StringList, false for Bool, 0 for Int
// (`obj.description == ""` is true when there is no description). Timestamp has no zero value:
// an absent timestamp is null, so `==` is false, `!=` is true and ordering comparisons do not
// match. `obj.x == null` / `obj.x != null` (null on either side) test whether the field is
// absent or JSON null; they are rewritten to a hidden boolean variable before checking, which
// is why `null` is allowed nowhere else.
//
// Evaluation errors (in practice: ordering or shifting an absent timestamp) make the object not
// match, as NULL does in SQL; Match returns an error only when the object itself does not fit
// the declared fields (a server bug).
//
// startsWith/contains/endsWith are refused on high-entropy fields: any field whose last name
// segment is `id` or ends in `_id` (`id`, `owner_id`, `certificate.id`).
package filter

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// Type is the CEL type of one filterable field.
type Type int

const (
	String     Type = iota // string (null in the object is treated as "" unless compared with null)
	Timestamp              // RFC 3339 string in the object, compared as an instant
	StringList             // list of strings (e.g. acl)
	Bool
	Int
)

// Fields maps a field name as written after `obj.` to its type. Dotted names such as
// "certificate.id" are looked up through nested objects; a String field whose value is a Ref
// (an object with an "id") compares by that id.
type Fields map[string]Type

// Program is a compiled filter, safe for concurrent use.
type Program struct {
	prg     cel.Program
	checked *ast.AST            // for Pushdown
	vars    map[string]variable // the CEL variables the expression uses, by name
}

// Error is a filter the API must refuse with 400. Msg says what is wrong, without the
// "Invalid CEL query: " prefix that the HTTP layer adds.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// variable says how to read one CEL variable out of an object.
type variable struct {
	name   string   // field name, for messages
	path   []string // JSON path
	typ    Type
	isNull bool // the hidden `obj.x == null` variable
}

const nullPrefix = "@null." // hidden variables; '@' cannot appear in a CEL identifier

var celTypes = map[Type]*cel.Type{
	String:     cel.StringType,
	Timestamp:  cel.TimestampType,
	StringList: cel.ListType(cel.StringType),
	Bool:       cel.BoolType,
	Int:        cel.IntType,
}

// baseEnv has everything but the fields: no macros (exists, all, has, ...), `time.now`, and
// the timestamp add/subtract members.
var baseEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.ClearMacros(),
		cel.ParserExpressionSizeLimit(4096),
		cel.Variable("time.now", cel.TimestampType),
		timestampShift("add", 1),
		timestampShift("subtract", -1),
	)
})

// timestampShift declares ts.<name>("1d12h"), moving ts by sign times the duration.
func timestampShift(name string, sign time.Duration) cel.EnvOption {
	return cel.Function(name, cel.MemberOverload("filter_timestamp_"+name,
		[]*cel.Type{cel.TimestampType, cel.StringType}, cel.TimestampType,
		cel.BinaryBinding(func(ts, dur ref.Val) ref.Val {
			d, ok := parseDuration(string(dur.(types.String)))
			if !ok {
				return types.NewErr("invalid duration %s", rules.Quote(fmt.Sprint(dur.Value())))
			}
			return types.Timestamp{Time: ts.(types.Timestamp).Time.Add(sign * d)}
		})))
}

// envFor declares each field as the variable "obj.<name>", plus its hidden null marker.
// Extending the base environment is cheap next to parsing, so it is not cached. It panics on a
// field of unknown Type: that is a bug in the caller, not a bad filter.
func envFor(fields Fields) *cel.Env {
	base, err := baseEnv()
	opts := make([]cel.EnvOption, 0, 2*len(fields))
	for n, typ := range fields {
		t, ok := celTypes[typ]
		if !ok {
			panic(fmt.Sprintf("filter: field %q has unknown type %d", n, typ))
		}
		opts = append(opts, cel.Variable("obj."+n, t), cel.Variable(nullPrefix+n, cel.BoolType))
	}
	if err == nil {
		base, err = base.Extend(opts...)
	}
	if err != nil {
		panic(fmt.Sprintf("filter: %v", err)) // the declarations are fixed: cannot happen
	}
	return base
}

// Compile parses and checks expr against fields. Every error it returns is an *Error. It
// panics if fields holds a Type that is not one of the constants above.
func Compile(expr string, fields Fields) (*Program, error) {
	env := envFor(fields)
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, issuesError(iss)
	}
	native := parsed.NativeRep()
	c := &compiler{fields: fields, info: native.SourceInfo(), nextID: ast.MaxID(native),
		fac: ast.NewExprFactory(), vars: map[string]variable{}}
	if err := c.expr(native.Expr()); err != nil {
		return nil, err
	}
	checked, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, issuesError(iss)
	}
	if !checked.OutputType().IsExactType(cel.BoolType) {
		return nil, &Error{fmt.Sprintf("the filter must be a boolean expression, not %s", checked.OutputType())}
	}
	prg, err := env.Program(checked, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, &Error{err.Error()}
	}
	return &Program{prg: prg, checked: checked.NativeRep(), vars: c.vars}, nil
}

// issuesError reports the first of cel-go's issues (later ones mostly follow from it), its
// text clipped: cel-go repeats the offending token, which can be as long as the filter.
func issuesError(iss *cel.Issues) *Error {
	errs := iss.Errors()
	msg := rules.ClipMessage(errs[0].Message) + atColumn(errs[0].Location.Column())
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(errs)-1)
	}
	return &Error{msg}
}

// Match evaluates the program against one object decoded from JSON into map[string]any.
func (p *Program) Match(obj map[string]any) (bool, error) {
	return p.MatchAt(obj, time.Now())
}

// MatchAt is Match with `time.now` bound to now.
func (p *Program) MatchAt(obj map[string]any, now time.Time) (bool, error) {
	act := &activation{p: p, obj: obj, now: now}
	out, _, err := p.prg.Eval(act)
	if act.err != nil {
		return false, act.err
	}
	if err != nil {
		return false, nil // e.g. ordering an absent timestamp: no match (see package comment)
	}
	b, ok := out.(types.Bool)
	return bool(b) && ok, nil
}

// activation reads variables from the object lazily, so only the fields used are converted.
type activation struct {
	p   *Program
	obj map[string]any
	now time.Time
	err error // the first object value that does not fit its declared type
}

func (a *activation) Parent() interpreter.Activation { return nil }

func (a *activation) ResolveName(name string) (any, bool) {
	if name == "time.now" {
		return types.Timestamp{Time: a.now}, true
	}
	v, ok := a.p.vars[name]
	if !ok {
		return nil, false
	}
	val, err := v.read(a.obj)
	if err != nil {
		a.err = cmp.Or(a.err, err)
		return types.WrapErr(err), true
	}
	return val, true
}

func (v variable) read(obj map[string]any) (ref.Val, error) {
	var raw any = obj
	for _, k := range v.path {
		m, _ := raw.(map[string]any)
		raw = m[k] // a missing key or a non-object on the way is null
	}
	if v.isNull {
		return types.Bool(raw == nil), nil
	}
	switch v.typ {
	case String:
		switch x := raw.(type) {
		case nil:
			return types.String(""), nil
		case string:
			return types.String(x), nil
		case map[string]any: // a Ref compares by its id
			if id, ok := x["id"].(string); ok {
				return types.String(id), nil
			}
		}
	case Timestamp:
		switch x := raw.(type) {
		case nil:
			return types.NullValue, nil
		case string:
			if t, err := time.Parse(time.RFC3339, x); err == nil {
				return types.Timestamp{Time: t}, nil
			}
		}
	case StringList:
		if raw == nil {
			return types.NewStringList(types.DefaultTypeAdapter, nil), nil
		}
		if list, ok := raw.([]any); ok {
			strs := make([]string, len(list))
			for i, e := range list {
				if strs[i], ok = e.(string); !ok {
					break
				}
			}
			if ok {
				return types.NewStringList(types.DefaultTypeAdapter, strs), nil
			}
		}
	case Bool:
		switch x := raw.(type) {
		case nil:
			return types.False, nil
		case bool:
			return types.Bool(x), nil
		}
	case Int:
		switch x := raw.(type) {
		case nil:
			return types.IntZero, nil
		case float64:
			return types.Int(x), nil
		}
	}
	return nil, fmt.Errorf("filter: field %q has an unexpected value %#v", v.name, raw)
}

// compiler walks the parsed AST, rejecting what the subset excludes, recording the fields
// used and rewriting null comparisons.
type compiler struct {
	fields Fields
	info   *ast.SourceInfo
	fac    ast.ExprFactory
	nextID int64
	vars   map[string]variable
}

func (c *compiler) errorf(e ast.Expr, format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...) + atColumn(c.info.GetStartLocation(e.ID()).Column())}
}

// atColumn turns a 0-based column into a message suffix; cel-go uses -1 for "no location".
func atColumn(col int) string {
	if col < 0 {
		return ""
	}
	return fmt.Sprintf(" (at column %d)", col+1)
}

func (c *compiler) expr(e ast.Expr) error {
	switch e.Kind() {
	case ast.LiteralKind:
		switch e.AsLiteral().(type) {
		case types.Null:
			return c.errorf(e, "null can only be compared with a field, as in obj.description == null")
		case types.Bytes:
			return c.errorf(e, "bytes literals are not supported")
		}
		return nil
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			if err := c.expr(el); err != nil {
				return err
			}
		}
		return nil
	case ast.IdentKind, ast.SelectKind:
		_, err := c.field(e)
		return err
	case ast.CallKind:
		return c.call(e)
	}
	return c.errorf(e, "map and object literals are not supported")
}

// field checks that e is `obj.<declared field>` and returns the field's name.
func (c *compiler) field(e ast.Expr) (string, error) {
	var path []string
	root := e
	for root.Kind() == ast.SelectKind {
		path = append([]string{root.AsSelect().FieldName()}, path...)
		root = root.AsSelect().Operand()
	}
	switch {
	case root.Kind() != ast.IdentKind:
		return "", c.errorf(e, "field selection is only supported on obj")
	case root.AsIdent() == "time" && slices.Equal(path, []string{"now"}):
		return "", c.errorf(root, "time.now can only be used as timestamp(time.now)")
	case root.AsIdent() != "obj":
		return "", c.errorf(root, "unknown variable %s: a filter can only refer to obj", rules.Quote(root.AsIdent()))
	case len(path) == 0:
		return "", c.errorf(root, "obj must be followed by a field name, as in obj.id")
	}
	name := strings.Join(path, ".")
	typ, ok := c.fields[name]
	if !ok {
		return "", c.errorf(root, "unknown field %s; the filterable fields are %s", rules.Quote("obj."+name), c.fieldList())
	}
	c.vars["obj."+name] = variable{name: name, path: path, typ: typ}
	return name, nil
}

func (c *compiler) fieldList() string {
	var names []string
	for n := range c.fields {
		names = append(names, "obj."+n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (c *compiler) isField(e ast.Expr, typ Type) bool {
	name, err := c.field(e)
	return err == nil && c.fields[name] == typ
}

func isNull(e ast.Expr) bool {
	return e.Kind() == ast.LiteralKind && e.AsLiteral() == types.NullValue
}

func (c *compiler) call(e ast.Expr) error {
	call := e.AsCall()
	fn, args := call.FunctionName(), call.Args()
	if call.IsMemberFunction() {
		args = append([]ast.Expr{call.Target()}, args...)
	}
	switch fn {
	case operators.LogicalNot, operators.LogicalAnd, operators.LogicalOr,
		operators.Less, operators.LessEquals, operators.Greater, operators.GreaterEquals:
	case operators.Equals, operators.NotEquals:
		if isNull(args[0]) || isNull(args[1]) {
			return c.nullCheck(e, fn, args)
		}
	case operators.In:
		if args[0].Kind() == ast.ListKind || c.isField(args[0], StringList) {
			return c.errorf(e, "list-in-list is not supported: the left side of in must be a single value")
		}
		if args[1].Kind() != ast.ListKind && !c.isField(args[1], StringList) {
			return c.errorf(args[1], "the right side of in must be a list literal or a list field")
		}
	case "size":
	case "startsWith", "contains", "endsWith":
		for _, a := range args {
			if name, err := c.field(a); err == nil && highEntropy(name) {
				return c.errorf(e, "%s() is not allowed on the high-entropy field obj.%s", fn, name)
			}
		}
	case "timestamp":
		return c.timestamp(e, call)
	case "add", "subtract":
		if len(args) == 2 {
			if d := args[1]; d.Kind() != ast.LiteralKind || !validDuration(d.AsLiteral()) {
				return c.errorf(d, "%s() takes a duration literal such as \"7d\", \"24h\", \"15m\" or \"1d12h\"", fn)
			}
		}
	case operators.Index, operators.OptIndex:
		return c.errorf(e, "index access is not supported")
	case operators.Add, operators.Subtract, operators.Multiply, operators.Divide,
		operators.Modulo, operators.Negate:
		return c.errorf(e, "arithmetic is not supported")
	case operators.Conditional:
		return c.errorf(e, "the ternary operator is not supported")
	case "matches":
		return c.errorf(e, "regular expressions are not supported")
	case "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "duration":
		return c.errorf(e, "type checks and conversions are not supported, except timestamp()")
	case "exists", "exists_one", "all", "map", "filter", "has":
		return c.errorf(e, "macros such as %s() are not supported", rules.Clip(fn))
	default:
		return c.errorf(e, "function %s() is not supported", rules.Clip(fn))
	}
	for _, a := range args {
		if err := c.expr(a); err != nil {
			return err
		}
	}
	return nil
}

// nullCheck rewrites `obj.x == null` to the hidden variable @null.x (and != to its negation):
// the field variables are never null themselves (see the package comment).
func (c *compiler) nullCheck(e ast.Expr, fn string, args []ast.Expr) error {
	operand := args[0]
	if isNull(operand) {
		operand = args[1]
	}
	name, err := c.field(operand)
	if err != nil {
		return c.errorf(e, "null can only be compared with a field, as in obj.description == null")
	}
	v := c.vars["obj."+name]
	v.isNull = true
	c.vars[nullPrefix+name] = v
	test := c.fac.NewIdent(c.id(), nullPrefix+name)
	if fn == operators.NotEquals {
		test = c.fac.NewCall(c.id(), operators.LogicalNot, test)
	}
	e.SetKindCase(test)
	return nil
}

func (c *compiler) id() int64 {
	c.nextID++
	return c.nextID
}

// timestamp accepts timestamp("<RFC 3339>") and timestamp(time.now) only.
func (c *compiler) timestamp(e ast.Expr, call ast.CallExpr) error {
	if call.IsMemberFunction() || len(call.Args()) != 1 {
		return c.errorf(e, "timestamp() takes one argument")
	}
	arg := call.Args()[0]
	switch arg.Kind() {
	case ast.LiteralKind:
		if s, ok := arg.AsLiteral().(types.String); ok {
			if _, err := time.Parse(time.RFC3339, string(s)); err == nil {
				return nil
			}
		}
	case ast.SelectKind:
		if sel := arg.AsSelect(); sel.FieldName() == "now" && sel.Operand().Kind() == ast.IdentKind &&
			sel.Operand().AsIdent() == "time" {
			return nil
		}
	}
	return c.errorf(arg, "timestamp() takes time.now or an RFC 3339 string such as \"2025-01-01T00:00:00Z\"")
}

func highEntropy(name string) bool {
	last := name[strings.LastIndex(name, ".")+1:]
	return last == "id" || strings.HasSuffix(last, "_id")
}

func validDuration(v ref.Val) bool {
	s, ok := v.(types.String)
	if !ok {
		return false
	}
	_, ok = parseDuration(string(s))
	return ok
}

var durationUnits = map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}

// parseDuration reads durations such as "7d", "24h", "15m", "30s" and "1d12h".
func parseDuration(s string) (time.Duration, bool) {
	var total, n time.Duration
	digits := false
	for i := 0; i < len(s); i++ {
		if ch := s[i]; '0' <= ch && ch <= '9' {
			if n > (math.MaxInt64-9)/10 {
				return 0, false
			}
			n, digits = n*10+time.Duration(ch-'0'), true
			continue
		}
		unit, ok := durationUnits[s[i]]
		if !ok || !digits || n > (math.MaxInt64-total)/unit {
			return 0, false
		}
		total, n, digits = total+n*unit, 0, false
	}
	return total, s != "" && !digits
}
