package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"go.yaml.in/yaml/v3"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
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
	PhaseTCPConnect   = trafficpolicy.PhaseTCPConnect
	PhaseHTTPRequest  = trafficpolicy.PhaseHTTPRequest
	PhaseHTTPResponse = trafficpolicy.PhaseHTTPResponse
)

// Caps of a traffic policy (ours): the document's size (ERR_2236) and the rules in it, over
// all phases (ERR_7195).
const (
	MaxTrafficPolicyBytes = 64 << 10
	MaxTrafficPolicyRules = 100
)

// PolicyVariables are the CEL variables a phase's expressions may use (trafficpolicy.Variables).
var PolicyVariables = trafficpolicy.Variables

// PolicyActionTypes are the traffic policy action types known (those of the public traffic
// policy language): a misspelled one is refused with a suggestion; one this server does not
// run is refused as such (trafficpolicy.ErrUnsupported).
var PolicyActionTypes = trafficpolicy.ActionTypes

// policyPhases are the phases each owner accepts.
var policyPhases = map[string][]string{
	PolicyOwnerTCPEdge:    {PhaseTCPConnect},
	PolicyOwnerTLSEdge:    {PhaseTCPConnect},
	PolicyOwnerHTTPSRoute: {PhaseHTTPRequest, PhaseHTTPResponse},
}

// TrafficPolicy checks a traffic_policy module of owner (PolicyOwner…) by compiling it
// (CompileTrafficPolicy), and refuses an action this server does not run (ERR_2236, naming
// the phase, rule and action).
func TrafficPolicy(req *api.TrafficPolicyModuleRequest, owner string) (*api.TrafficPolicyModule, error) {
	if req.Value == nil || strings.TrimSpace(*req.Value) == "" {
		if _, ok := policyPhases[owner]; !ok {
			return nil, fmt.Errorf("rules: unknown traffic policy owner %q", owner)
		}
		return nil, violation("ERR_2236", "value", "The traffic policy value is required: a policy document in JSON or YAML.")
	}
	p, err := CompileTrafficPolicy(*req.Value, owner)
	if err != nil {
		return nil, err
	}
	if len(p.Unsupported) > 0 {
		return nil, violation("ERR_2236", "value", "The traffic policy's %s: this server does not run this action type; it runs %s.", p.Unsupported[0], strings.Join(supportedActions(), ", "))
	}
	return &api.TrafficPolicyModule{Enabled: enabled(req.Enabled), Value: *req.Value}, nil
}

// CompileTrafficPolicy compiles a traffic policy document of owner into what the edge runs:
// the value parses as JSON or YAML (ERR_2236); its phases suit the owner (ERR_2248); every
// rule has a list of string expressions that compile as boolean CEL and at least one action
// whose type is one of PolicyActionTypes, allowed in its phase, with a valid configuration
// (ERR_2236, naming the phase, rule and action); at most MaxTrafficPolicyRules rules
// (ERR_7195). Actions this server does not run are listed in the policy's Unsupported.
func CompileTrafficPolicy(value, owner string) (*trafficpolicy.Policy, error) {
	allowed, ok := policyPhases[owner]
	if !ok {
		return nil, fmt.Errorf("rules: unknown traffic policy owner %q", owner)
	}
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
	policy := trafficpolicy.New()
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
			if err := policyRule(policy, phase, i, r); err != nil {
				return nil, err
			}
		}
	}
	return policy, nil
}

// supportedActions are the action types this server runs.
func supportedActions() []string {
	return slices.DeleteFunc(slices.Clone(PolicyActionTypes), func(t string) bool { return trafficpolicy.ActionPhases(t) == nil })
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
func policyRule(policy *trafficpolicy.Policy, phase string, i int, r any) error {
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
	compiled := policy.AddRule(phase, where)
	for j, e := range exprs {
		src, ok := e.(string)
		if !ok {
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d must be a string.", where, j+1)
		}
		prg, iss, badType, err := trafficpolicy.Expression(phase, src)
		switch {
		case err != nil:
			return fmt.Errorf("rules: traffic policy CEL: %w", err)
		case iss != nil:
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d %s does not compile: %s", where, j+1, Quote(src), celIssue(iss))
		case badType != nil:
			return violation("ERR_2236", "value", "The traffic policy's %s: expression %d %s must evaluate to a bool, not %s.", where, j+1, Quote(src), badType)
		}
		compiled.AddExpression(prg)
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
			return violation("ERR_2236", "value", "The traffic policy's %s: action %d has the unknown type %s.%s Supported types are %s.", where, j+1, Quote(typ), didYouMean(typ, PolicyActionTypes), strings.Join(supportedActions(), ", "))
		}
		a, err := trafficpolicy.ParseAction(phase, typ, action["config"])
		switch {
		case errors.Is(err, trafficpolicy.ErrUnsupported):
			policy.Unsupported = append(policy.Unsupported, fmt.Sprintf("%s: action %d (%s)", where, j+1, typ))
		case err != nil:
			return violation("ERR_2236", "value", "The traffic policy's %s: action %d (%s): %s.", where, j+1, typ, Clip(err.Error()))
		default:
			compiled.AddAction(a)
		}
	}
	return nil
}

// celIssue is cel-go's first issue, clipped (it repeats the expression, which can be long),
// plus how many more there are.
func celIssue(iss *cel.Issues) string {
	errs := iss.Errors()
	msg := ClipMessage(strings.TrimSpace(errs[0].Message))
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more errors)", len(errs)-1)
	}
	return msg + "."
}
