package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// moduleObject builds a module's value from the members given; the others are null.
func moduleObject(t *testing.T, attrTypes map[string]attr.Type, given map[string]attr.Value) types.Object {
	t.Helper()
	ctx := context.Background()
	values := map[string]attr.Value{}
	for name, typ := range attrTypes {
		if v, ok := given[name]; ok {
			values[name] = v
			continue
		}
		null, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
		if err != nil {
			t.Fatal(err)
		}
		values[name] = null
	}
	return types.ObjectValueMust(attrTypes, values)
}

// The value rules of the modules run at plan time on known values only: a null or unknown
// module, or one with an unknown member, is left for later (the server checks it at apply).
func TestModuleValueRules(t *testing.T) {
	ctx := context.Background()
	tlsTermination := tlsTerminationModule("tls")
	webhook := webhookVerificationModule
	uaFilter := userAgentFilterModule
	for _, tt := range []struct {
		name   string
		schema validator.Object
		types  map[string]attr.Type
		given  map[string]attr.Value
		null   bool
		ok     bool
	}{
		{"tls: edge termination with min_version", tlsTermination.resourceAttribute("").Validators[0], tlsTermination.attrTypes(),
			map[string]attr.Value{"terminate_at": types.StringValue("edge"), "min_version": types.StringValue("1.3")}, false, true},
		{"tls: min_version with upstream", tlsTermination.resourceAttribute("").Validators[0], tlsTermination.attrTypes(),
			map[string]attr.Value{"terminate_at": types.StringValue("upstream"), "min_version": types.StringValue("1.2")}, false, false},
		{"tls: upstream, min_version unknown", tlsTermination.resourceAttribute("").Validators[0], tlsTermination.attrTypes(),
			map[string]attr.Value{"terminate_at": types.StringValue("upstream"), "min_version": types.StringUnknown()}, false, true},
		{"webhook: sns with a secret", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("sns"), "secret": types.StringValue("s")}, false, false},
		{"webhook: sns without a secret", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("SNS")}, false, true},
		{"webhook: github without a secret", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("github")}, false, false},
		{"webhook: github with a write-only secret", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("github"), "secret_wo": types.StringValue("s"), "secret_wo_version": types.Int64Value(1)}, false, true},
		{"webhook: github, secret unknown", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("github"), "secret": types.StringUnknown()}, false, true},
		{"webhook: unknown provider", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(),
			map[string]attr.Value{"provider": types.StringValue("myspace"), "secret": types.StringValue("s")}, false, false},
		{"user agents: valid patterns", uaFilter.resourceAttribute("").Validators[0], uaFilter.attrTypes(),
			map[string]attr.Value{"deny": types.ListValueMust(types.StringType, []attr.Value{types.StringValue("(?i)curl/.*")})}, false, true},
		{"user agents: bad pattern", uaFilter.resourceAttribute("").Validators[0], uaFilter.attrTypes(),
			map[string]attr.Value{"allow": types.ListValueMust(types.StringType, []attr.Value{types.StringValue("(unclosed")})}, false, false},
		{"user agents: unknown pattern", uaFilter.resourceAttribute("").Validators[0], uaFilter.attrTypes(),
			map[string]attr.Value{"allow": types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()})}, false, true},
		{"null module", webhook.resourceAttribute("").Validators[0], webhook.attrTypes(), nil, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			value := types.ObjectNull(tt.types)
			if !tt.null {
				given := map[string]attr.Value{"enabled": types.BoolValue(true)}
				for k, v := range tt.given {
					given[k] = v
				}
				value = moduleObject(t, tt.types, given)
			}
			var resp validator.ObjectResponse
			tt.schema.ValidateObject(ctx, validator.ObjectRequest{Path: path.Root("module"), ConfigValue: value}, &resp)
			if resp.Diagnostics.HasError() == tt.ok {
				t.Errorf("ok = %v, diagnostics %v", tt.ok, resp.Diagnostics)
			}
		})
	}
	// The unknown module: nothing to check yet.
	var resp validator.ObjectResponse
	webhook.resourceAttribute("").Validators[0].ValidateObject(ctx, validator.ObjectRequest{Path: path.Root("module"), ConfigValue: types.ObjectUnknown(webhook.attrTypes())}, &resp)
	if resp.Diagnostics.HasError() {
		t.Errorf("unknown module: %v", resp.Diagnostics)
	}
}
