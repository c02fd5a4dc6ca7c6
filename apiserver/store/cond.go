package store

// Cond is a condition on the JSON documents a List selects: a list filter pushed down to the
// database, so that a filtered page costs what the page costs and not what the account holds.
// A nil *Cond selects everything.
//
// Its semantics are those of the filter language (package filter) in SQL's three-valued
// logic: a CEL evaluation error is SQL NULL, and a row is selected only when the condition is
// true. Values never are NULL except a timestamp member that is absent or JSON null.
type Cond struct {
	Op    CondOp
	Conds []*Cond // And, Or: the operands; Not: the one operand
	// Cmp is the comparison of OpCompare: "==", "!=", "<", "<=", ">" or ">=".
	Cmp         string
	Left, Right *Value   // OpCompare, the string functions (Left.startsWith(Right)), OpIn and OpHas (Left)
	List        []*Value // OpIn: the list literal
	List2       *Value   // OpHas: the list member
	Bool        bool     // OpConst
	Path        []string // OpIsNull
}

// CondOp is what a Cond tests.
type CondOp int

const (
	OpConst      CondOp = iota // Bool
	OpAnd                      // every one of Conds
	OpOr                       // any of Conds
	OpNot                      // not Conds[0]
	OpCompare                  // Left Cmp Right; == and != treat NULL as a value (null == null)
	OpIn                       // Left equals one of List (null-safe, as ==)
	OpHas                      // the list member List2 holds the string Left
	OpIsNull                   // the member at Path is absent or JSON null
	OpStartsWith               // Left starts with Right
	OpEndsWith                 // Left ends with Right
	OpContains                 // Left contains Right
)

// Value is an operand of a Cond.
type Value struct {
	Kind ValueKind
	Path []string  // ValueMember, ValueSize: the member's JSON path
	Type ValueType // ValueMember, ValueSize: how the member is read
	// Const is a ValueConst: a string (a timestamp in the API's TimeFormat compares as text)
	// or an int64.
	Const any
}

// ValueKind says what a Value is.
type ValueKind int

const (
	ValueConst  ValueKind = iota // Const
	ValueMember                  // the member at Path, read as Type
	ValueSize                    // the length of the member at Path: characters of a Text, elements of a List
)

// ValueType says how a member is read.
type ValueType int

const (
	// Text: a string; "" when absent or null; a ref (an object with an "id") reads as its id.
	Text ValueType = iota
	// Time: a timestamp in the API's TimeFormat, compared as text (byte order); NULL when
	// absent or null.
	Time
	// List: an array of strings; absent or null is the empty list.
	List
)
