package validators

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Values of one member in the table below.
var (
	null    = tftypes.NewValue(tftypes.String, nil)
	unknown = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	known   = tftypes.NewValue(tftypes.String, "x")
)

// config is a configuration with the members a and b.
func config(a, b tftypes.Value) tfsdk.Config {
	s := schema.Schema{Attributes: map[string]schema.Attribute{
		"a": schema.StringAttribute{Optional: true},
		"b": schema.StringAttribute{Optional: true},
	}}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"a": tftypes.String, "b": tftypes.String}}
	return tfsdk.Config{Schema: s, Raw: tftypes.NewValue(typ, map[string]tftypes.Value{"a": a, "b": b})}
}

func TestMembers(t *testing.T) {
	a, b := path.Root("a"), path.Root("b")
	for _, tt := range []struct {
		name string
		rule Members
		a, b tftypes.Value
		// whether ValidateConfig (unknown may be null) and ModifyPlan (unknown is set) pass
		validateOK, planOK bool
	}{
		{"conflicting: none", Conflicting(a, b), null, null, true, true},
		{"conflicting: one", Conflicting(a, b), known, null, true, true},
		{"conflicting: both known", Conflicting(a, b), known, known, false, false},
		{"conflicting: known and unknown", Conflicting(a, b), known, unknown, true, false},
		{"conflicting: both unknown", Conflicting(a, b), unknown, unknown, true, false},
		{"conflicting: unknown alone", Conflicting(a, b), unknown, null, true, true},
		{"exactly one: none", ExactlyOneOf(a, b), null, null, false, false},
		{"exactly one: one known", ExactlyOneOf(a, b), null, known, true, true},
		{"exactly one: one unknown", ExactlyOneOf(a, b), unknown, null, true, true},
		{"exactly one: both known", ExactlyOneOf(a, b), known, known, false, false},
		{"exactly one: known and unknown", ExactlyOneOf(a, b), unknown, known, true, false},
		{"exactly one: both unknown", ExactlyOneOf(a, b), unknown, unknown, true, false},
		{"also requires: neither", AlsoRequires(a, b), null, null, true, true},
		{"also requires: both", AlsoRequires(a, b), known, known, true, true},
		{"also requires: only the other", AlsoRequires(a, b), null, known, true, true},
		{"also requires: missing", AlsoRequires(a, b), known, null, false, false},
		{"also requires: unknown, missing", AlsoRequires(a, b), unknown, null, true, false},
		{"also requires: unknown requirement", AlsoRequires(a, b), known, unknown, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config(tt.a, tt.b)
			if diags := tt.rule.Check(context.Background(), cfg, false); diags.HasError() == tt.validateOK {
				t.Errorf("validate: ok = %v, want %v (%v)", !diags.HasError(), tt.validateOK, diags)
			}
			if diags := tt.rule.Check(context.Background(), cfg, true); diags.HasError() == tt.planOK {
				t.Errorf("plan: ok = %v, want %v (%v)", !diags.HasError(), tt.planOK, diags)
			}
		})
	}
}
