package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Mapping helpers between API values and framework values.

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

// mapForRule prepares a map for a rule checked at plan time, where some values may be known
// only after apply (another resource's attribute, a variable under validate): such a value
// stands for a valid one (stand), so the keys and the count are still checked now and the
// value once it is known (by the server). Null values are left out.
func mapForRule[T any](v types.Map, stand T, value func(attr.Value) T) map[string]T {
	out := make(map[string]T, len(v.Elements()))
	for k, e := range v.Elements() {
		switch {
		case e.IsUnknown():
			out[k] = stand
		case !e.IsNull():
			out[k] = value(e)
		}
	}
	return out
}

// stringOf is the string of a known types.String element.
func stringOf(v attr.Value) string {
	s, _ := v.(types.String)
	return s.ValueString()
}

// optional returns a pointer to v's string for a request, nil when null or unknown.
func optional(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

// clearable is an optional string for an update: null (no longer set) sends "", which
// clears the value, while an omitted member would keep it.
func clearable(v types.String) *string {
	if v.IsNull() {
		return new(string)
	}
	return optional(v)
}

// emptyAsNull maps an optional string of the API, which omits empty ones: null in state,
// unless the configuration says "" (kept, so `description = ""` never shows a diff either).
func emptyAsNull(v string, configured types.String) types.String {
	if v == "" && !configured.Equal(types.StringValue("")) {
		return types.StringNull()
	}
	return types.StringValue(v)
}

// stringsOf returns the elements of a list of strings; nil when null or unknown. Called at
// apply time, when every element is known.
func stringsOf(v types.List) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make([]string, 0, len(v.Elements()))
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// stringList returns a list value of strings, [] for none.
func stringList(items []string) types.List {
	values := make([]attr.Value, 0, len(items))
	for _, s := range items {
		values = append(values, types.StringValue(s))
	}
	return types.ListValueMust(types.StringType, values)
}

// stringMap returns a map value of strings, {} for none.
func stringMap(items map[string]string) types.Map {
	values := make(map[string]attr.Value, len(items))
	for k, v := range items {
		values[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, values)
}

// stringMapOf returns the entries of a known map of strings; nil when null or unknown.
func stringMapOf(v types.Map) map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make(map[string]string, len(v.Elements()))
	for k, e := range v.Elements() {
		out[k] = e.(types.String).ValueString()
	}
	return out
}
