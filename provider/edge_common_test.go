package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestHostportsValidator: each known hostport is checked as the server does, duplicates
// compared in the API's form; null and unknown values (known at apply) pass.
func TestHostportsValidator(t *testing.T) {
	list := func(items ...attr.Value) types.List { return types.ListValueMust(types.StringType, items) }
	s := types.StringValue
	for _, tt := range []struct {
		name  string
		value types.List
		ok    bool
	}{
		{"null list", types.ListNull(types.StringType), true},
		{"unknown list", types.ListUnknown(types.StringType), true},
		{"empty", list(), true},
		{"valid", list(s("a.example.org:443"), s("b.example.org:443")), true},
		{"unknown element", list(types.StringUnknown(), s("b.example.org:443")), true},
		{"null element", list(types.StringNull()), true},
		{"no port", list(s("a.example.org")), false},
		{"port 0", list(s("a.example.org:0")), false},
		{"duplicate in another case", list(s("a.example.org:443"), s("A.Example.org:443")), false},
		{"duplicate with a leading zero", list(s("a.example.org:443"), s("a.example.org:0443")), false},
	} {
		resp := &validator.ListResponse{}
		hostportsValidator{}.ValidateList(context.Background(), validator.ListRequest{Path: path.Root("hostports"), ConfigValue: tt.value}, resp)
		if resp.Diagnostics.HasError() == tt.ok {
			t.Errorf("%s: errors %v, want ok=%v", tt.name, resp.Diagnostics, tt.ok)
		}
	}
}

// TestHostportsSpelling: the state keeps the configured spelling when the API's means the
// same, and a plan that only respells the state's hostports keeps the state's.
func TestHostportsSpelling(t *testing.T) {
	configured := stringList([]string{"Shop.Example.ORG:443"})
	if got := hostportsValue([]string{"shop.example.org:443"}, configured); !got.Equal(configured) {
		t.Errorf("state %v, want the configured spelling", got)
	}
	if got := hostportsValue([]string{"other.example.org:443"}, configured); !got.Equal(stringList([]string{"other.example.org:443"})) {
		t.Errorf("state %v, want the API's value", got)
	}
	state := stringList([]string{"shop.example.org:443"})
	for _, tt := range []struct {
		name       string
		plan, want types.List
	}{
		{"respelled", configured, state},
		{"changed", stringList([]string{"x.example.org:443"}), stringList([]string{"x.example.org:443"})},
		{"unknown element", types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()}), types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()})},
	} {
		resp := &planmodifier.ListResponse{PlanValue: tt.plan}
		sameStrings(hostportKey).PlanModifyList(context.Background(), planmodifier.ListRequest{StateValue: state, PlanValue: tt.plan}, resp)
		if !resp.PlanValue.Equal(tt.want) {
			t.Errorf("%s: plan %v, want %v", tt.name, resp.PlanValue, tt.want)
		}
	}
}

// TestKeepSamePolicy: a reformatted document plans the state's; another document, a null or
// an unknown one is left alone.
func TestKeepSamePolicy(t *testing.T) {
	state := types.StringValue(`{"on_tcp_connect":[{"actions":[{"type":"deny"}]}]}`)
	for _, tt := range []struct {
		name       string
		plan, want types.String
	}{
		{"YAML", types.StringValue("on_tcp_connect:\n  - actions: [{type: deny}]\n"), state},
		{"another", types.StringValue(`{"on_tcp_connect":[]}`), types.StringValue(`{"on_tcp_connect":[]}`)},
		{"unknown", types.StringUnknown(), types.StringUnknown()},
		{"null", types.StringNull(), types.StringNull()},
	} {
		resp := &planmodifier.StringResponse{PlanValue: tt.plan}
		keepSamePolicy{}.PlanModifyString(context.Background(), planmodifier.StringRequest{StateValue: state, PlanValue: tt.plan}, resp)
		if !resp.PlanValue.Equal(tt.want) {
			t.Errorf("%s: plan %v, want %v", tt.name, resp.PlanValue, tt.want)
		}
	}
}
