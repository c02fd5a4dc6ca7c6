package trafficpolicy

import (
	"fmt"
	"net/http"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// Policy is a traffic policy compiled: per phase, its rules in order.
//
// Semantics: a phase's rules run in order; a rule whose expressions all evaluate to true
// (a rule without expressions always) runs its actions in order; a terminating action
// (deny, custom-response, redirect, close-connection, restrict-ips that refuses, rate-limit
// that trips) ends the phase and the request or connection (Stop). An expression or action
// that fails to evaluate ends the phase with an error: the edge refuses the request (500) or
// closes the connection, and logs it. Actions that change the request or response are seen
// by the expressions of the rules after them.
type Policy struct {
	phases map[string][]*Rule
	// Unsupported are the actions the policy names that this server does not run, each as
	// "<phase> rule <n>: <type>": the write-time rules refuse such a policy; an edge refuses
	// the traffic of a stored one rather than run it without them.
	Unsupported []string
}

// Rule is one rule of a phase.
type Rule struct {
	Where   string // "on_http_request rule 2 ("name")", for errors and logs
	exprs   []cel.Program
	actions []Action
}

// New returns an empty policy, which rules are added to (AddRule).
func New() *Policy { return &Policy{phases: map[string][]*Rule{}} }

// AddRule appends a rule to phase; where names it in errors.
func (p *Policy) AddRule(phase, where string) *Rule {
	r := &Rule{Where: where}
	p.phases[phase] = append(p.phases[phase], r)
	return r
}

// Has reports whether phase has rules.
func (p *Policy) Has(phase string) bool { return p != nil && len(p.phases[phase]) > 0 }

// Expression compiles src in the environment of phase as a boolean condition of a rule.
// A compile error is a *cel.Issues error (issues); a program that is not boolean returns
// its type.
func Expression(phase, src string) (prg cel.Program, issues *cel.Issues, outType *cel.Type, err error) {
	env, err := Env(phase)
	if err != nil {
		return nil, nil, nil, err
	}
	checked, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, iss, nil, nil
	}
	if t := checked.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, nil, t, nil
	}
	prg, err = env.Program(checked)
	return prg, nil, nil, err
}

// AddExpression adds a condition to the rule.
func (r *Rule) AddExpression(prg cel.Program) { r.exprs = append(r.exprs, prg) }

// AddAction adds an action to the rule.
func (r *Rule) AddAction(a Action) { r.actions = append(r.actions, a) }

// Exchange is one connection, request or response going through a phase: what the
// variables are made from, and what the actions change.
type Exchange struct {
	Conn Conn
	Req  *http.Request  // the HTTP phases: the request (changed in place by on_http_request)
	Res  *http.Response // on_http_response: the response (changed in place)
	// Owner is the ID of the route or edge whose policy runs: rate-limit buckets are per
	// owner; Limits holds them (nil: rate-limit refuses to run).
	Owner  string
	Limits *Limits
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log is what the log actions that ran recorded: their metadata, merged.
	Log map[string]any

	vars map[string]any // the CEL variables, rebuilt after an action changed the request
	rule string         // the rule whose actions run
}

func (x *Exchange) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// changed drops the variables: an action changed what they are made from.
func (x *Exchange) changed() { x.vars = nil }

func (x *Exchange) variables() map[string]any {
	if x.vars == nil {
		x.vars = x.activation()
	}
	return x.vars
}

// StopKind is how a terminating action ends a phase.
type StopKind int

const (
	// Refuse: deny, restrict-ips; an HTTP visitor gets an error page with Status.
	Refuse StopKind = iota + 1
	// Respond: custom-response, redirect; the visitor gets Status, Header and Body.
	Respond
	// Close: close-connection; the connection is closed without an answer.
	Close
	// Limited: a rate-limit tripped; 429 with Retry-After.
	Limited
)

// Stop is the end of a phase by a terminating action.
type Stop struct {
	Kind       StopKind
	Status     int
	Header     http.Header
	Body       string
	RetryAfter time.Duration
	Where      string // the rule
	Action     string // the action's type
	Reason     string // for an error page: why
}

// Run runs phase's rules on x; a nil Stop and error means the phase let it through.
func (p *Policy) Run(phase string, x *Exchange) (*Stop, error) {
	if p == nil {
		return nil, nil
	}
	for _, r := range p.phases[phase] {
		ok, err := r.matches(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Where, err)
		}
		if !ok {
			continue
		}
		x.rule = r.Where
		for i, a := range r.actions {
			stop, err := a.run(x)
			if err != nil {
				return nil, fmt.Errorf("%s: action %d (%s): %w", r.Where, i+1, a.Type(), err)
			}
			if stop != nil {
				stop.Where, stop.Action = r.Where, a.Type()
				return stop, nil
			}
		}
	}
	return nil, nil
}

// matches evaluates the rule's expressions in order, stopping at the first false one.
func (r *Rule) matches(x *Exchange) (bool, error) {
	for i, prg := range r.exprs {
		out, _, err := prg.Eval(x.variables())
		if err != nil {
			return false, fmt.Errorf("expression %d: %w", i+1, err)
		}
		b, ok := out.(types.Bool)
		if !ok {
			return false, fmt.Errorf("expression %d evaluated to %v, not a bool", i+1, out.Type())
		}
		if !b {
			return false, nil
		}
	}
	return true, nil
}
