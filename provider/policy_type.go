package provider

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"go.yaml.in/yaml/v3"

	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
)

// A traffic policy document is a JSON or YAML string whose formatting means nothing: two
// spellings that decode to the same value are semantically equal, so reformatting (or the
// API answering with another spelling) never shows a diff. The framework applies this when it
// reads values back after apply and refresh.

// policyType is the type of traffic_policy.value.
type policyType struct{ basetypes.StringType }

var (
	_ basetypes.StringTypable                    = policyType{}
	_ basetypes.StringValuableWithSemanticEquals = policyValue{}
)

func (t policyType) Equal(o attr.Type) bool { _, ok := o.(policyType); return ok }
func (t policyType) String() string         { return "policyType" }

func (t policyType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return policyValue{in}, nil
}

func (t policyType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return policyValue{s}, nil
}

func (t policyType) ValueType(context.Context) attr.Value { return policyValue{} }

// policyValue is a traffic policy document.
type policyValue struct{ basetypes.StringValue }

func (v policyValue) Type(context.Context) attr.Type { return policyType{} }

func (v policyValue) Equal(o attr.Value) bool {
	other, ok := o.(policyValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals: both decode (JSON is YAML) to the same value. A document that does
// not decode is equal only to the same text.
func (v policyValue) StringSemanticEquals(_ context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, ok := o.(policyValue)
	if !ok {
		return false, nil
	}
	return samePolicy(v.ValueString(), other.ValueString()), nil
}

func samePolicy(a, b string) bool {
	if a == b {
		return true
	}
	var da, db any
	if yaml.Unmarshal([]byte(a), &da) != nil || yaml.Unmarshal([]byte(b), &db) != nil {
		return false
	}
	return reflect.DeepEqual(da, db)
}

func policyNull() policyValue         { return policyValue{basetypes.NewStringNull()} }
func policyOf(s string) policyValue   { return policyValue{basetypes.NewStringValue(s)} }
func policyPtr(v policyValue) *string { return optional(v.StringValue) }

// keepSamePolicy plans the state's document when the configured one means the same:
// semantic equality is applied to values read back, not while planning, so without it a
// reformatted document would plan an update that changes nothing.
var keepSamePolicy = planmodifiers.EquivalentString("A document that means the same as the one in state (reformatted JSON or YAML) is no change.", samePolicy)
