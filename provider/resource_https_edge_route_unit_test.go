package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestCheckOneAuthModule: ERR_7079 at plan time counts enabled modules only (an omitted
// `enabled` is true); a module or `enabled` known only at apply is no certain violation.
func TestCheckOneAuthModule(t *testing.T) {
	auth := func(typ map[string]attr.Type, enabled types.Bool) types.Object {
		attrs := map[string]attr.Value{}
		for name, tt := range typ {
			v, _ := tt.ValueFromTerraform(context.Background(), tftypes.NewValue(tt.TerraformType(context.Background()), nil))
			attrs[name] = v
		}
		attrs["enabled"] = enabled
		return types.ObjectValueMust(typ, attrs)
	}
	oauth, oidc, saml := oauthModule.attrTypes(), oidcModule.attrTypes(), samlModule.attrTypes()
	on, off, unset, unknown := types.BoolValue(true), types.BoolValue(false), types.BoolNull(), types.BoolUnknown()
	for _, tt := range []struct {
		name    string
		m       httpsEdgeRouteModel
		wantErr bool
	}{
		{"none", httpsEdgeRouteModel{OAuth: types.ObjectNull(oauth), OIDC: types.ObjectNull(oidc), SAML: types.ObjectNull(saml)}, false},
		{"one", httpsEdgeRouteModel{OAuth: types.ObjectNull(oauth), OIDC: auth(oidc, on), SAML: types.ObjectNull(saml)}, false},
		{"two enabled", httpsEdgeRouteModel{OAuth: auth(oauth, on), OIDC: auth(oidc, on), SAML: types.ObjectNull(saml)}, true},
		{"enabled omitted counts as true", httpsEdgeRouteModel{OAuth: types.ObjectNull(oauth), OIDC: auth(oidc, unset), SAML: auth(saml, unset)}, true},
		{"one disabled", httpsEdgeRouteModel{OAuth: auth(oauth, off), OIDC: auth(oidc, on), SAML: types.ObjectNull(saml)}, false},
		{"enabled unknown", httpsEdgeRouteModel{OAuth: auth(oauth, unknown), OIDC: auth(oidc, on), SAML: types.ObjectNull(saml)}, false},
		{"module unknown", httpsEdgeRouteModel{OAuth: types.ObjectUnknown(oauth), OIDC: auth(oidc, on), SAML: types.ObjectNull(saml)}, false},
	} {
		var diags diag.Diagnostics
		checkOneAuthModule(context.Background(), &tt.m, &diags)
		if diags.HasError() != tt.wantErr {
			t.Errorf("%s: diagnostics %v, want error %v", tt.name, diags, tt.wantErr)
		}
	}
}
