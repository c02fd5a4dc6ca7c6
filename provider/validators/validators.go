// Package validators holds the provider's plan-time validators. Each one calls the rule of
// internal/rules that the server applies, so a plan fails for exactly what the API would
// reject. Rules over a value leave null and unknown values alone: they are checked once
// known. Rules over which members are set (Members) decide on null-ness alone, so they also
// judge values known only after apply.
package validators

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// MaxBytes fails a string longer than max bytes (the API counts bytes, not characters).
func MaxBytes(max int) validator.String { return maxBytes(max) }

type maxBytes int

func (v maxBytes) Description(context.Context) string {
	return fmt.Sprintf("must be at most %d bytes long", int(v))
}
func (v maxBytes) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v maxBytes) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if n := len(req.ConfigValue.ValueString()); n > int(v) {
		resp.Diagnostics.AddAttributeError(req.Path, "Value too long", fmt.Sprintf("The value is %d bytes long; the maximum is %d bytes.", n, int(v)))
	}
}

// String adapts a rule over one string value (e.g. rules.ACLRule) into a validator.
func String(description string, rule func(string) error) validator.String {
	return stringRule{description, rule}
}

type stringRule struct {
	description string
	rule        func(string) error
}

func (v stringRule) Description(context.Context) string             { return v.description }
func (v stringRule) MarkdownDescription(ctx context.Context) string { return v.description }
func (v stringRule) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.rule(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid value", err.Error())
	}
}

// ACLRule checks one credential ACL rule with the server's rule.
func ACLRule() validator.String {
	return String("must be '*' or 'bind:' followed by a domain, an address or a label", rules.ACLRule)
}

// StringValue returns the value of a known, non-null string, for ValidateConfig code.
func StringValue(v types.String) (string, bool) {
	if v.IsNull() || v.IsUnknown() {
		return "", false
	}
	return v.ValueString(), true
}
