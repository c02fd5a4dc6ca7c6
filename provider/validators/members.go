package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// Members is a rule over which members of a configuration are set (not their values): two
// that conflict, exactly one of several, one that needs another. Such a rule can be decided
// while values are still unknown, since a value known only after apply is not null.
//
// It is checked twice. As a ConfigValidator (ValidateConfig, also run by `terraform
// validate`, where input variables are unknown and may turn out null) an unknown value counts
// as "maybe set" and only certain violations are reported. Check with unknownIsSet from
// ModifyPlan: there variables are known and what is still unknown is another object's result,
// so the conflict is certain and the plan fails before anything is applied.
type Members struct {
	kind  membersKind
	paths []path.Path // for alsoRequires and requiresOneOf: the member first, then what it requires
	// within is the object the paths are relative to (a module); empty for the root. While it
	// is null the rule does not apply; while it is unknown it cannot be judged.
	within path.Path
}

type membersKind int

const (
	conflicting membersKind = iota
	exactlyOne
	alsoRequires
	requiresOneOf
)

var _ resource.ConfigValidator = Members{}

// Conflicting allows at most one of the members to be set.
func Conflicting(paths ...path.Path) Members { return Members{kind: conflicting, paths: paths} }

// ExactlyOneOf requires exactly one of the members to be set.
func ExactlyOneOf(paths ...path.Path) Members { return Members{kind: exactlyOne, paths: paths} }

// AlsoRequires requires every one of required to be set when p is set.
func AlsoRequires(p path.Path, required ...path.Path) Members {
	return Members{kind: alsoRequires, paths: append([]path.Path{p}, required...)}
}

// RequiresOneOf requires at least one of alternatives to be set when p is set (a secret
// given either as a value or write-only).
func RequiresOneOf(p path.Path, alternatives ...path.Path) Members {
	return Members{kind: requiresOneOf, paths: append([]path.Path{p}, alternatives...)}
}

// Under makes a rule declared relative to an object (a module, paths like
// path.Root("client_id")) apply to that object at parent; it holds only while the object
// is set. Rules nest: Under of a rule already under an object prefixes both.
func (m Members) Under(parent path.Path) Members {
	out := Members{kind: m.kind, within: Join(parent, m.within)}
	for _, p := range m.paths {
		out.paths = append(out.paths, Join(parent, p))
	}
	return out
}

// Within makes a rule whose paths are already complete hold only while the object at p is
// set (an OAuth provider's own members).
func (m Members) Within(p path.Path) Members {
	m.within = p
	return m
}

// Join appends the steps of p to parent.
func Join(parent, p path.Path) path.Path {
	out := parent
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			out = out.AtName(string(s))
		case path.PathStepElementKeyInt:
			out = out.AtListIndex(int(s))
		case path.PathStepElementKeyString:
			out = out.AtMapKey(string(s))
		}
	}
	return out
}

func (m Members) Description(context.Context) string {
	names := names(m.paths)
	switch m.kind {
	case conflicting:
		return "at most one of " + strings.Join(names, ", ") + " may be set"
	case exactlyOne:
		return "exactly one of " + strings.Join(names, ", ") + " must be set"
	case requiresOneOf:
		return names[0] + " requires one of " + strings.Join(names[1:], ", ")
	default:
		return names[0] + " requires " + strings.Join(names[1:], ", ")
	}
}

func (m Members) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (m Members) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	resp.Diagnostics.Append(m.Check(ctx, req.Config, false)...)
}

// presence of one member.
type presence int

const (
	unset presence = iota
	set
	maybe // unknown, and unknown values may still turn out null
)

// Check applies the rule to a configuration; unknownIsSet says an unknown value is set.
func (m Members) Check(ctx context.Context, config tfsdk.Config, unknownIsSet bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(m.within.Steps()) > 0 {
		var v attr.Value
		diags.Append(config.GetAttribute(ctx, m.within, &v)...)
		if diags.HasError() || v == nil || v.IsNull() || v.IsUnknown() {
			return diags
		}
	}
	of := make([]presence, len(m.paths))
	var isSet, maybeSet []path.Path
	for i, p := range m.paths {
		var v attr.Value
		diags.Append(config.GetAttribute(ctx, p, &v)...)
		switch {
		case diags.HasError():
			return diags
		case v.IsUnknown() && !unknownIsSet:
			of[i] = maybe
			maybeSet = append(maybeSet, p)
		case !v.IsNull():
			of[i] = set
			isSet = append(isSet, p)
		}
	}
	later := ""
	if unknownIsSet {
		later = " A value known only after apply counts as set."
	}
	switch m.kind {
	case conflicting, exactlyOne:
		if len(isSet) > 1 {
			diags.AddAttributeError(isSet[0], "Invalid Attribute Combination", fmt.Sprintf("%s are set, but %s.%s", strings.Join(names(isSet), " and "), m.Description(ctx), later))
		}
		if m.kind == exactlyOne && len(isSet) == 0 && len(maybeSet) == 0 {
			if len(m.within.Steps()) > 0 {
				diags.AddAttributeError(m.within, "Missing Attribute Configuration", "None of the attributes is set, but "+m.Description(ctx)+".")
				return diags
			}
			diags.AddError("Missing Attribute Configuration", "None of the attributes is set, but "+m.Description(ctx)+".")
		}
	case alsoRequires:
		if of[0] != set {
			return diags
		}
		for i, p := range m.paths[1:] {
			if of[i+1] == unset {
				diags.AddAttributeError(m.paths[0], "Missing Attribute Configuration", fmt.Sprintf("%s is set, so %s must be set too.%s", m.paths[0], p, later))
			}
		}
	case requiresOneOf:
		if of[0] != set {
			return diags
		}
		for _, o := range of[1:] {
			if o != unset {
				return diags
			}
		}
		diags.AddAttributeError(m.paths[0], "Missing Attribute Configuration", fmt.Sprintf("%s is set, so one of %s must be set too.%s", m.paths[0], strings.Join(names(m.paths[1:]), ", "), later))
	}
	return diags
}

func names(paths []path.Path) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p.String()
	}
	return out
}
