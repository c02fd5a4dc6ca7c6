// Package planmodifiers holds the provider's plan modifiers: a configured value that means
// the same as the state's plans the state's.
//
// Values the API normalises (domain case, IPv6 CIDRs, header names) or whose formatting means
// nothing (traffic policy documents) keep the state's spelling in the plan when the
// configured one means the same: Terraform accepts a planned value equal to the prior state in
// place of the configured one. Flatten keeps the configured spelling on create, so this
// matters after an import, whose state holds the API's spelling, and for documents the
// framework's semantic equality covers only when values are read back, not while planning.
package planmodifiers

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// sameDescription is what the modifiers of normalised values say of themselves.
const sameDescription = "A value that means the same as the one in state (e.g. differs only in case) is no change."

// NormalizedString keeps the state's string when both normalise alike.
func NormalizedString(normalize func(string) string) planmodifier.String {
	return EquivalentString(sameDescription, func(a, b string) bool { return normalize(a) == normalize(b) })
}

// EquivalentString keeps the state's string when same says both mean the same; description
// says what is the same.
func EquivalentString(description string, same func(state, plan string) bool) planmodifier.String {
	return stringModifier{description: description, same: same}
}

type stringModifier struct {
	description string
	same        func(state, plan string) bool
}

func (m stringModifier) Description(context.Context) string { return m.description }
func (m stringModifier) MarkdownDescription(context.Context) string {
	return m.description
}
func (m stringModifier) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if known(req.StateValue) && known(req.PlanValue) && m.same(req.StateValue.ValueString(), req.PlanValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// EquivalentMap keeps the state's map of strings when same says both mean the same.
func EquivalentMap(same func(state, plan map[string]string) bool) planmodifier.Map {
	return mapModifier(same)
}

type mapModifier func(state, plan map[string]string) bool

func (m mapModifier) Description(context.Context) string         { return sameDescription }
func (m mapModifier) MarkdownDescription(context.Context) string { return sameDescription }
func (m mapModifier) PlanModifyMap(_ context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if known(req.StateValue) && allKnown(req.PlanValue) && m(stringsOf(req.StateValue), stringsOf(req.PlanValue)) {
		resp.PlanValue = req.StateValue
	}
}

func known(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }

// allKnown says a map is known down to its values.
func allKnown(v types.Map) bool {
	if !known(v) {
		return false
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

// stringsOf returns the entries of a known map of strings.
func stringsOf(v types.Map) map[string]string {
	out := make(map[string]string, len(v.Elements()))
	for k, e := range v.Elements() {
		out[k] = e.(types.String).ValueString()
	}
	return out
}

// NormalizedStrings keeps the state's list of strings when the planned one normalises alike
// element by element.
func NormalizedStrings(normalize func(string) string) planmodifier.List {
	return listModifier(normalize)
}

type listModifier func(string) string

func (m listModifier) Description(context.Context) string         { return sameDescription }
func (m listModifier) MarkdownDescription(context.Context) string { return sameDescription }
func (m listModifier) PlanModifyList(_ context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if !known(req.StateValue) || !known(req.PlanValue) || len(req.StateValue.Elements()) != len(req.PlanValue.Elements()) {
		return
	}
	plan := req.PlanValue.Elements()
	for i, e := range req.StateValue.Elements() {
		s, ok := e.(types.String)
		p, pok := plan[i].(types.String)
		if !ok || !pok || p.IsUnknown() || m(s.ValueString()) != m(p.ValueString()) {
			return
		}
	}
	resp.PlanValue = req.StateValue
}
