package provider

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestOwnedModulesRemoved: only a module set before and null now is removed, in the declared
// order; a module added or kept is left to the PATCH.
func TestOwnedModulesRemoved(t *testing.T) {
	attrs := toggleModule.attrTypes()
	set, null := types.ObjectValueMust(attrs, map[string]attr.Value{"enabled": types.BoolValue(true)}), types.ObjectNull(attrs)
	type model struct{ a, b, c types.Object }
	o := ownedModules[model]{of: func(m *model) []namedModule {
		return []namedModule{{"a", m.a}, {"b", m.b}, {"c", m.c}}
	}}
	for _, tt := range []struct {
		name        string
		prior, plan model
		want        []string
	}{
		{"none set", model{null, null, null}, model{null, null, null}, nil},
		{"added", model{null, null, null}, model{set, set, null}, nil},
		{"kept", model{set, set, set}, model{set, set, set}, nil},
		{"removed in order", model{set, set, set}, model{null, set, null}, []string{"a", "c"}},
	} {
		if got := o.removed(&tt.plan, &tt.prior); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: removed = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := (ownedModules[model]{}).removed(&model{}, &model{set, set, set}); got != nil {
		t.Errorf("an owner without modules removes %v", got)
	}
}
