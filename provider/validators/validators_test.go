package validators

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func run(v validator.String, value types.String) bool {
	resp := &validator.StringResponse{}
	v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("x"), ConfigValue: value}, resp)
	return !resp.Diagnostics.HasError()
}

func TestMaxBytes(t *testing.T) {
	for _, tt := range []struct {
		value types.String
		ok    bool
	}{
		{types.StringNull(), true},
		{types.StringUnknown(), true},
		{types.StringValue(""), true},
		{types.StringValue("abcd"), true},
		{types.StringValue("abcde"), false},
		{types.StringValue("ééé"), false}, // 3 characters, 6 bytes
	} {
		if got := run(MaxBytes(4), tt.value); got != tt.ok {
			t.Errorf("MaxBytes(4)(%s) ok = %v, want %v", tt.value, got, tt.ok)
		}
	}
}

func TestACLRule(t *testing.T) {
	for _, tt := range []struct {
		value types.String
		ok    bool
	}{
		{types.StringNull(), true},
		{types.StringUnknown(), true},
		{types.StringValue("*"), true},
		{types.StringValue("bind:*.example.com"), true},
		{types.StringValue("bind:env=prod"), true},
		{types.StringValue("connect:x"), false},
		{types.StringValue(""), false},
	} {
		if got := run(ACLRule(), tt.value); got != tt.ok {
			t.Errorf("ACLRule()(%s) ok = %v, want %v", tt.value, got, tt.ok)
		}
	}
}

func TestStringValue(t *testing.T) {
	if _, ok := StringValue(types.StringNull()); ok {
		t.Error("null is not a value")
	}
	if _, ok := StringValue(types.StringUnknown()); ok {
		t.Error("unknown is not a value")
	}
	if v, ok := StringValue(types.StringValue("x")); !ok || v != "x" {
		t.Error("a known value is one")
	}
}
