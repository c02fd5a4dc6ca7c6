// Package trafficpolicy runs traffic policy documents (details.md §8.10): a policy compiled
// once into phases of rules, each rule CEL programs over the variables of its phase and a
// list of actions with their parsed configurations, then run on every connection, request
// and response. The write-time rules (internal/rules) compile documents with this package,
// so that what the API accepts is exactly what the edge runs.
package trafficpolicy

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
)

// Phases: on_tcp_connect runs on TCP and TLS edges, the HTTP phases on HTTPS routes.
const (
	PhaseTCPConnect   = "on_tcp_connect"
	PhaseHTTPRequest  = "on_http_request"
	PhaseHTTPResponse = "on_http_response"
)

// Phases in the order they run.
var Phases = []string{PhaseTCPConnect, PhaseHTTPRequest, PhaseHTTPResponse}

// Variables are the CEL variables of each phase, each a map (`conn.client_ip`,
// `req.url.path` …; the members are in vars.go). What a phase cannot see (a response before
// it exists) is not declared there, so using it is refused when the policy is written.
var Variables = map[string][]string{
	PhaseTCPConnect:   {"conn", "endpoint", "time", "vars"},
	PhaseHTTPRequest:  {"conn", "endpoint", "time", "vars", "req"},
	PhaseHTTPResponse: {"conn", "endpoint", "time", "vars", "req", "res"},
}

var (
	envsOnce sync.Once
	envs     map[string]*cel.Env
	envsErr  error
)

// Env returns the CEL environment of a phase, built once: the variables of the phase, cel-go's
// strings, encoders, math, lists and sets extensions, and the helper macros (macros).
func Env(phase string) (*cel.Env, error) {
	envsOnce.Do(func() {
		envs = map[string]*cel.Env{}
		for p, vars := range Variables {
			opts := append([]cel.EnvOption{ext.Strings(), ext.Encoders(), ext.Math(), ext.Lists(), ext.Sets()}, macros()...)
			for _, v := range vars {
				opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
			}
			env, err := cel.NewEnv(opts...)
			if err != nil {
				envsErr = err
				return
			}
			envs[p] = env
		}
	})
	if envsErr != nil {
		return nil, envsErr
	}
	env, ok := envs[phase]
	if !ok {
		return nil, fmt.Errorf("trafficpolicy: unknown phase %q", phase)
	}
	return env, nil
}

// macros are the helper functions of the public traffic policy language. The ones that read
// the request or the response (getReqHeader('x') …) are parser macros that pass that
// variable on to a hidden function (_getReqHeader(req, 'x')): they need no state of their
// own, and using one in a phase without that variable is refused like the variable itself.
func macros() []cel.EnvOption {
	str, strs, m := cel.StringType, cel.ListType(cel.StringType), cel.MapType(cel.StringType, cel.DynType)
	opts := []cel.EnvOption{
		cel.Function("inCidrRange", cel.Overload("inCidrRange_string_string", []*cel.Type{str, str}, cel.BoolType,
			cel.BinaryBinding(func(ip, cidr ref.Val) ref.Val { return inCidrs(ip, []ref.Val{cidr}) }))),
		cel.Function("inCidrRanges", cel.Overload("inCidrRanges_string_list", []*cel.Type{str, strs}, cel.BoolType,
			cel.BinaryBinding(func(ip, cidrs ref.Val) ref.Val {
				l := cidrs.(traits.Lister)
				var vals []ref.Val
				for it := l.Iterator(); it.HasNext() == types.True; {
					vals = append(vals, it.Next())
				}
				return inCidrs(ip, vals)
			}))),
	}
	// name, variable, member of the variable, whether it answers has… (bool) or get… (the values).
	for _, h := range []struct {
		name, variable, member string
		has                    bool
	}{
		{"hasReqHeader", "req", "headers", true}, {"getReqHeader", "req", "headers", false},
		{"hasResHeader", "res", "headers", true}, {"getResHeader", "res", "headers", false},
		{"hasQueryParam", "req", "query_params", true}, {"getQueryParam", "req", "query_params", false},
		{"hasReqCookie", "req", "cookies", true}, {"getReqCookie", "req", "cookies", false},
		{"hasResCookie", "res", "cookies", true}, {"getResCookie", "res", "cookies", false},
	} {
		hidden, variable := "_"+h.name, h.variable
		opts = append(opts, cel.Macros(cel.GlobalMacro(h.name, 1, func(eh cel.MacroExprFactory, _ ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
			return eh.NewCall(hidden, eh.NewIdent(variable), args[0]), nil
		})))
		member, has, header := h.member, h.has, h.member == "headers"
		lookup := func(v, name ref.Val) (ref.Val, bool) {
			key, ok := name.(types.String)
			if !ok {
				return types.NoSuchOverloadErr(), false
			}
			if header {
				key = types.String(strings.ToLower(string(key)))
			}
			outer, ok := v.(traits.Mapper)
			if !ok {
				return types.NewErr("%s is not available here", variable), false
			}
			inner, found := outer.Find(types.String(member))
			if !found {
				return nil, false
			}
			got, found := inner.(traits.Mapper).Find(key)
			return got, found
		}
		result := strs
		if h.has {
			result = cel.BoolType
		} else if !header && member != "query_params" {
			result = cel.DynType // a cookie: {name, value}
		}
		opts = append(opts, cel.Function(hidden, cel.Overload(hidden+"_map_string", []*cel.Type{m, str}, result,
			cel.BinaryBinding(func(v, name ref.Val) ref.Val {
				got, found := lookup(v, name)
				if types.IsError(got) {
					return got
				}
				switch {
				case has:
					return types.Bool(found)
				case found && member == "cookies": // the first of that name
					return got.(traits.Indexer).Get(types.Int(0))
				case found:
					return got
				case member == "cookies":
					return types.NewErr("no cookie %s", name)
				}
				return types.NewStringList(types.DefaultTypeAdapter, nil)
			}))))
	}
	return opts
}

// inCidrs reports whether ip (a string) is in one of cidrs (strings); a value that is not an
// address or a prefix is an evaluation error.
func inCidrs(ip ref.Val, cidrs []ref.Val) ref.Val {
	s, ok := ip.(types.String)
	if !ok {
		return types.NoSuchOverloadErr()
	}
	addr, err := netip.ParseAddr(string(s))
	if err != nil {
		return types.NewErr("inCidrRange: %q is not an IP address", string(s))
	}
	for _, c := range cidrs {
		cs, ok := c.(types.String)
		if !ok {
			return types.NoSuchOverloadErr()
		}
		p, err := netip.ParsePrefix(string(cs))
		if err != nil {
			return types.NewErr("inCidrRange: %q is not a CIDR range", string(cs))
		}
		if p.Contains(addr.Unmap()) {
			return types.True
		}
	}
	return types.False
}

// headerMap is h with lower-case names, as req.headers and res.headers hold them.
func headerMap(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		k = strings.ToLower(k)
		out[k] = append(out[k], v...)
	}
	return out
}
