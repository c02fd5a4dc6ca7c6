package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
	"go.yaml.in/yaml/v3"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Traffic policy documents (details.md §8.10): a mapping from phase to a list of rules, each
// `{name, expressions: [CEL], actions: [{type, config}]}`. The document is checked, never
// rewritten: the response holds the value exactly as sent.

// Owners of a traffic_policy module.
const (
	PolicyOwnerTCPEdge    = "tcp_edge"
	PolicyOwnerTLSEdge    = "tls_edge"
	PolicyOwnerHTTPSRoute = "https_route"
)

// Traffic policy phases: on_tcp_connect runs on TCP and TLS edges, the HTTP phases on HTTPS
// routes.
const (
	PhaseTCPConnect   = "on_tcp_connect"
	PhaseHTTPRequest  = "on_http_request"
	PhaseHTTPResponse = "on_http_response"
)

// Caps of a traffic policy (ours): the document's size (ERR_2236) and the rules in it, over
// all phases (ERR_7195).
const (
	MaxTrafficPolicyBytes = 64 << 10
	MaxTrafficPolicyRules = 100
)

// PolicyVariables are the CEL variables a phase's expressions may use, each a map of dynamic
// values (`req.url.path`, `conn.client_ip` …); what a phase cannot see (a response before it
// exists) is not declared there, so using it fails at plan time.
var PolicyVariables = map[string][]string{
	PhaseTCPConnect:   {"conn", "endpoint", "time", "vars"},
	PhaseHTTPRequest:  {"conn", "endpoint", "time", "vars", "req"},
	PhaseHTTPResponse: {"conn", "endpoint", "time", "vars", "req", "res"},
}

// policyMacros declare the helper functions of the public traffic policy language that
// policies commonly use, so that such a policy compiles; they are never evaluated here.
func policyMacros() []cel.EnvOption {
	str, strs := cel.StringType, cel.ListType(cel.StringType)
	decl := func(name string, args []*cel.Type, result *cel.Type) cel.EnvOption {
		return cel.Function(name, cel.Overload(name+"_"+fmt.Sprint(len(args)), args, result))
	}
	return []cel.EnvOption{
		decl("inCidrRange", []*cel.Type{str, str}, cel.BoolType),
		decl("inCidrRanges", []*cel.Type{str, strs}, cel.BoolType),
		decl("hasReqHeader", []*cel.Type{str}, cel.BoolType),
		decl("getReqHeader", []*cel.Type{str}, strs),
		decl("hasResHeader", []*cel.Type{str}, cel.BoolType),
		decl("getResHeader", []*cel.Type{str}, strs),
		decl("hasQueryParam", []*cel.Type{str}, cel.BoolType),
		decl("getQueryParam", []*cel.Type{str}, strs),
		decl("hasReqCookie", []*cel.Type{str}, cel.BoolType),
		decl("getReqCookie", []*cel.Type{str}, cel.DynType),
		decl("hasResCookie", []*cel.Type{str}, cel.BoolType),
		decl("getResCookie", []*cel.Type{str}, cel.DynType),
	}
}

// policyPhases are the phases each owner accepts.
// PolicyActionTypes are the traffic policy action types accepted (the spec names none; these
// are the actions of the traffic policy language the modules were replaced by). An action
// whose type is misspelled would otherwise be stored and never run.
var PolicyActionTypes = []string{
	"add-headers", "basic-auth", "circuit-breaker", "close-connection", "compress-response",
	"custom-response", "deny", "forward-internal", "http-request", "jwt-validation", "log",
	"oauth", "openid-connect", "owasp-crs-request", "owasp-crs-response", "rate-limit",
	"redirect", "remove-headers", "restrict-ips", "set-vars", "terminate-tls", "url-rewrite",
	"verify-webhook",
}

var policyPhases = map[string][]string{
	PolicyOwnerTCPEdge:    {PhaseTCPConnect},
	PolicyOwnerTLSEdge:    {PhaseTCPConnect},
	PolicyOwnerHTTPSRoute: {PhaseHTTPRequest, PhaseHTTPResponse},
}

var (
	policyEnvsOnce sync.Once
	policyEnvs     map[string]*cel.Env
	policyEnvsErr  error
)

// policyEnv returns the CEL environment of a phase, built once.
func policyEnv(phase string) (*cel.Env, error) {
	policyEnvsOnce.Do(func() {
		policyEnvs = map[string]*cel.Env{}
		for p, vars := range PolicyVariables {
			opts := append([]cel.EnvOption{ext.Strings(), ext.Encoders(), ext.Math(), ext.Lists(), ext.Sets()}, policyMacros()...)
			for _, v := range vars {
				opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
			}
			env, err := cel.NewEnv(opts...)
			if err != nil {
				policyEnvsErr = err
				return
			}
			policyEnvs[p] = env
		}
	})
	return policyEnvs[phase], policyEnvsErr
}

// TrafficPolicy checks a traffic_policy module of owner (PolicyOwner…): the value is required
// and parses as JSON or YAML (ERR_2236); its phases suit the owner (ERR_2248); every rule has
// a list of string expressions that compile as boolean CEL and at least one action whose type
// is one of PolicyActionTypes (ERR_2236, naming the phase and rule); at most MaxTrafficPolicyRules rules (ERR_7195).
func TrafficPolicy(req *api.TrafficPolicyModuleRequest, owner string) (*api.TrafficPolicyModule, error) {
	allowed, ok := policyPhases[owner]
	if !ok {
		return nil, fmt.Errorf("rules: unknown traffic policy owner %q", owner)
	}
	if req.Value == nil || strings.TrimSpace(*req.Value) == "" {
		return nil, violation("ERR_2236", "value", "The traffic policy value is required: a policy document in JSON or YAML.")
	}
	value := *req.Value
	if len(value) > MaxTrafficPolicyBytes {
		return nil, violation("ERR_2236", "value", "The traffic policy is %d bytes long; the maximum is %d bytes.", len(value), MaxTrafficPolicyBytes)
	}
	doc, err := parsePolicy(value)
	if err != nil {
		return nil, violation("ERR_2236", "value", "The traffic policy does not parse as JSON or YAML: %s.", Clip(err.Error()))
	}
	phases, ok := doc.(map[string]any)
	if !ok {
		return nil, violation("ERR_2236", "value", "The traffic policy must be a mapping from phase names (%s) to lists of rules.", strings.Join(allPhases(), ", "))
	}
	names := make([]string, 0, len(phases))
	for name := range phases {
		names = append(names, name)
	}
	// Phases in a fixed order, so that the same document always gives the same error.
	slices.SortFunc(names, func(a, b string) int {
		if d := phaseRank(a) - phaseRank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	total := 0
	for _, phase := range names {
		if _, known := PolicyVariables[phase]; !known {
			return nil, violation("ERR_2236", "value", "The traffic policy has an unknown phase %s; phases are %s.", Quote(phase), strings.Join(allPhases(), ", "))
		}
		if !slices.Contains(allowed, phase) {
			return nil, violation("ERR_2248", "value", "The phase %s is not allowed in the traffic policy of %s; allowed: %s.", phase, ownerName(owner), strings.Join(allowed, ", "))
		}
		rules, ok := phases[phase].([]any)
		if !ok && phases[phase] != nil {
			return nil, violation("ERR_2236", "value", "The phase %s must be a list of rules.", phase)
		}
		total += len(rules)
		if total > MaxTrafficPolicyRules {
			return nil, violation("ERR_7195", "value", "A traffic policy has at most %d rules.", MaxTrafficPolicyRules)
		}
		for i, r := range rules {
			if err := policyRule(phase, i, r); err != nil {
				return nil, err
			}
		}
	}
	return &api.TrafficPolicyModule{Enabled: enabled(req.Enabled), Value: value}, nil
}

func allPhases() []string { return []string{PhaseTCPConnect, PhaseHTTPRequest, PhaseHTTPResponse} }

func phaseRank(p string) int {
	if i := slices.Index(allPhases(), p); i >= 0 {
		return i
	}
	return len(allPhases())
}

func ownerName(owner string) string {
	switch owner {
	case PolicyOwnerTCPEdge:
		return "a TCP edge"
	case PolicyOwnerTLSEdge:
		return "a TLS edge"
	}
	return "an HTTPS edge route"
}

// parsePolicy reads a document as JSON when it is JSON, else as YAML.
func parsePolicy(value string) (any, error) {
	var doc any
	if json.Valid([]byte(value)) {
		err := json.Unmarshal([]byte(value), &doc)
		return doc, err
	}
	dec := yaml.NewDecoder(strings.NewReader(value))
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, errors.New("the document is empty")
	} else if err != nil {
		return nil, err
	}
	// A second document would be ignored silently; a policy is one document.
	var more any
	if err := dec.Decode(&more); err != io.EOF {
		return nil, errors.New("a policy is a single YAML document")
	}
	return doc, nil
}

// policyRule checks one rule of a phase; errors name the phase, the rule's index (from 1) and
// its name when it has one.
func policyRule(phase string, i int, r any) error {
	where := fmt.Sprintf("%s rule %d", phase, i+1)
	rule, ok := r.(map[string]any)
	if !ok {
		return violation("ERR_2236", "value", "The traffic policy's %s must be a mapping with name, expressions and actions.", where)
	}
	if name, ok := rule["name"]; ok {
		s, isString := name.(string)
		if !isString {
			return violation("ERR_2236", "value", "The traffic policy's %s: name must be a string.", where)
		}
		if s != "" {
			where += " (" + Quote(s) + ")"
		}
	}
	for key := range rule {
		if key != "name" && key != "expressions" && key != "actions" {
			return violation("ERR_2236", "value", "The traffic policy's %s has an unknown member %s; a rule has name, expressions and actions.", where, Quote(key))
		}
	}
	exprs, ok := rule["expressions"].([]any)
	if !ok && rule["expressions"] != nil {
		return violation("ERR_2236", "value", "The traffic policy's %s: expressions must be a list of strings.", where)
	}
	env, err := policyEnv(phase)
	if err != nil {
		return fmt.Errorf("rules: traffic policy CEL environment: %w", err)
	}
	for j, e := range exprs {
		src, ok := e.(string)
		if !ok {
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d must be a string.", where, j+1)
		}
		checked, iss := env.Compile(src)
		if iss != nil && iss.Err() != nil {
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d %s does not compile: %s", where, j+1, Quote(src), celIssue(iss))
		}
		if t := checked.OutputType(); t != cel.BoolType && t != cel.DynType {
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d %s must evaluate to a bool, not %s.", where, j+1, Quote(src), t)
		}
	}
	actions, ok := rule["actions"].([]any)
	if !ok || len(actions) == 0 {
		return violation("ERR_2236", "value", "The traffic policy's %s needs a list of at least one action.", where)
	}
	for j, a := range actions {
		action, ok := a.(map[string]any)
		typ, isString := action["type"].(string)
		if !ok || !isString || typ == "" {
			return violation("ERR_2236", "value", "The traffic policy's %s: action %d must be a mapping with a type.", where, j+1)
		}
		for key := range action {
			if key != "type" && key != "config" {
				return violation("ERR_2236", "value", "The traffic policy's %s: action %d has an unknown member %s; an action has type and config.", where, j+1, Quote(key))
			}
		}
		if !slices.Contains(PolicyActionTypes, typ) {
			return violation("ERR_2236", "value", "The traffic policy's %s: action %d has the unknown type %s.%s Supported types are %s.", where, j+1, Quote(typ), didYouMean(typ, PolicyActionTypes), strings.Join(PolicyActionTypes, ", "))
		}
	}
	return nil
}

// celIssue is cel-go's first issue, clipped (it repeats the expression, which can be long),
// plus how many more there are.
func celIssue(iss *cel.Issues) string {
	errs := iss.Errors()
	msg := Clip(strings.TrimSpace(errs[0].Message))
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(errs)-1)
	}
	return msg + "."
}
