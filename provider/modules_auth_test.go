package provider

import (
	"context"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

func oauthApp(id, secret, secretWO *string) *oauthAppModel {
	null := types.ListNull(types.StringType)
	return &oauthAppModel{ClientID: types.StringPointerValue(id), ClientSecret: types.StringPointerValue(secret), ClientSecretWO: types.StringPointerValue(secretWO),
		ClientSecretWOVersion: types.Int64Null(), Scopes: null, EmailAddresses: stringList([]string{"a@example.com"}), EmailDomains: null}
}

func sessionDefaults(cookie string) sessionModel {
	return sessionModel{Enabled: types.BoolValue(true), OptionsPassthrough: types.BoolValue(false), CookiePrefix: types.StringValue(cookie), InactivityTimeout: types.Int64Value(0), MaximumDuration: types.Int64Value(0)}
}

func TestAuthModulesRoundTrip(t *testing.T) {
	id, secret := new("cid"), new("s3cret")
	t.Run("oauth google, secret in state", func(t *testing.T) {
		got := roundTrip(t, oauthModule, oauthModuleModel{sessionModel: sessionDefaults(rules.DefaultOAuthCookiePrefix), AuthCheckInterval: types.Int64Value(0),
			Provider: &oauthProviderModel{Google: oauthApp(id, secret, nil)}}, rules.OAuth)
		if got.Provider.Google.ClientSecret.ValueString() != "s3cret" {
			t.Errorf("secret %v", got.Provider.Google.ClientSecret)
		}
	})
	t.Run("oauth github managed app", func(t *testing.T) {
		app := oauthApp(nil, nil, nil)
		roundTrip(t, oauthModule, oauthModuleModel{sessionModel: sessionDefaults("x."), AuthCheckInterval: types.Int64Value(0),
			Provider: &oauthProviderModel{GitHub: &oauthGitHubModel{oauthAppModel: *app, Teams: stringList([]string{"org/team"}), Organizations: types.ListNull(types.StringType)}}}, rules.OAuth)
	})
	t.Run("oidc, write-only secret sent, never in state; e-mail rules kept", func(t *testing.T) {
		ctx := context.Background()
		plan := oidcModuleModel{sessionModel: sessionDefaults(""), Issuer: types.StringValue("https://idp.example.com"), ClientID: types.StringValue("cid"),
			ClientSecret: types.StringNull(), ClientSecretWO: types.StringNull(), ClientSecretWOVersion: types.Int64Value(1), Scopes: types.ListNull(types.StringType),
			EmailAddresses: stringList([]string{"a@example.com"}), EmailDomains: types.ListNull(types.StringType)}
		config := plan
		config.ClientSecretWO = types.StringValue("wo-secret")
		planObj, _ := types.ObjectValueFrom(ctx, oidcModule.attrTypes(), plan)
		configObj, _ := types.ObjectValueFrom(ctx, oidcModule.attrTypes(), config)
		var diags diag.Diagnostics
		req := oidcModule.request(ctx, planObj, configObj, &diags)
		if req == nil || req.ClientSecret == nil || *req.ClientSecret != "wo-secret" || len(req.EmailAddresses) != 1 || req.EmailDomains != nil {
			t.Fatalf("request %+v %v", req, diags)
		}
		resp, err := rules.OIDC(req)
		if err != nil {
			t.Fatal(err)
		}
		state := oidcModule.value(ctx, resp, planObj, &diags)
		if diags.HasError() || !state.Equal(planObj) {
			t.Errorf("state %v, want the plan %v (%v)", state, planObj, diags)
		}
		if ds := oidcModule.dataValue(ctx, resp, &diags); ds.Attributes()["client_secret"].(types.String).ValueString() != "wo-secret" {
			t.Errorf("data source %v", ds)
		}
	})
	t.Run("saml", func(t *testing.T) {
		md, err := os.ReadFile("../internal/rules/testdata/idp_metadata.xml")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		plan := samlModuleModel{sessionModel: sessionDefaults(""), IdPMetadata: types.StringValue(string(md)), ForceAuthn: types.BoolValue(false), AllowIdPInitiated: types.BoolValue(true),
			AuthorizedGroups: types.ListNull(types.StringType), NameIDFormat: types.StringValue(rules.DefaultSAMLNameIDFormat)}
		obj, _ := types.ObjectValueFrom(ctx, samlModule.attrTypes(), plan)
		var diags diag.Diagnostics
		resp, err := rules.SAML(samlModule.request(ctx, obj, obj, &diags))
		if err != nil {
			t.Fatal(err)
		}
		resp.EntityID = "https://idp/saml/rt_1"
		var got samlModuleModel
		state := samlModule.value(ctx, resp, obj, &diags)
		diags.Append(state.As(ctx, &got, basetypes.ObjectAsOptions{})...)
		if diags.HasError() || !got.AuthorizedGroups.IsNull() || got.EntityID.ValueString() != resp.EntityID {
			t.Errorf("state %+v %v", got, diags)
		}
	})
}

// TestModuleMemberRules: the set/unset rules of a module hold only while it is set, with
// paths under the module, and the write-only form counts as the secret.
func TestModuleMemberRules(t *testing.T) {
	ctx := context.Background()
	s := schema.Schema{Attributes: map[string]schema.Attribute{"oauth": oauthModule.resourceAttribute(""), "oidc": oidcModule.resourceAttribute("")}}
	typ := s.Type().TerraformType(ctx).(tftypes.Object)
	oauthType := typ.AttributeTypes["oauth"].(tftypes.Object)
	providerType := oauthType.AttributeTypes["provider"].(tftypes.Object)
	appType := providerType.AttributeTypes["google"].(tftypes.Object)
	str := func(v any) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
	app := func(id, secret, wo any) tftypes.Value {
		vals := map[string]tftypes.Value{}
		for name, t := range appType.AttributeTypes {
			vals[name] = tftypes.NewValue(t, nil)
		}
		vals["client_id"], vals["client_secret"], vals["client_secret_wo"] = str(id), str(secret), str(wo)
		return tftypes.NewValue(appType, vals)
	}
	oauth := func(apps map[string]tftypes.Value) tftypes.Value {
		p := map[string]tftypes.Value{}
		for name, t := range providerType.AttributeTypes {
			p[name] = tftypes.NewValue(t, nil)
			if v, ok := apps[name]; ok {
				p[name] = v
			}
		}
		vals := map[string]tftypes.Value{}
		for name, t := range oauthType.AttributeTypes {
			vals[name] = tftypes.NewValue(t, nil)
		}
		vals["provider"] = tftypes.NewValue(providerType, p)
		return tftypes.NewValue(oauthType, vals)
	}
	cfg := func(o tftypes.Value) tfsdk.Config {
		return tfsdk.Config{Schema: s, Raw: tftypes.NewValue(typ, map[string]tftypes.Value{"oauth": o, "oidc": tftypes.NewValue(typ.AttributeTypes["oidc"], nil)})}
	}
	unknown := tftypes.UnknownValue
	for _, tt := range []struct {
		name               string
		oauth              tftypes.Value
		validateOK, planOK bool
	}{
		{"no module", tftypes.NewValue(oauthType, nil), true, true},
		{"unknown module", tftypes.NewValue(oauthType, unknown), true, true},
		{"managed app", oauth(map[string]tftypes.Value{"google": app(nil, nil, nil)}), true, true},
		{"own app", oauth(map[string]tftypes.Value{"google": app("id", "s", nil)}), true, true},
		{"own app, write-only secret", oauth(map[string]tftypes.Value{"google": app("id", nil, "s")}), true, true},
		{"id without secret", oauth(map[string]tftypes.Value{"google": app("id", nil, nil)}), false, false},
		{"secret without id", oauth(map[string]tftypes.Value{"google": app(nil, nil, "s")}), false, false},
		{"secret and write-only", oauth(map[string]tftypes.Value{"google": app("id", "s", "s")}), false, false},
		{"unknown secret", oauth(map[string]tftypes.Value{"google": app("id", unknown, nil)}), true, true},
		{"unknown id, no secret", oauth(map[string]tftypes.Value{"google": app(unknown, nil, nil)}), true, false},
		{"no provider", oauth(nil), false, false},
		{"two providers", oauth(map[string]tftypes.Value{"google": app(nil, nil, nil), "gitlab": app(nil, nil, nil)}), false, false},
		{"amazon managed", oauth(map[string]tftypes.Value{"amazon": app(nil, nil, nil)}), false, false},
		{"amazon own app", oauth(map[string]tftypes.Value{"amazon": app("id", "s", nil)}), true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, unknownIsSet := range []bool{false, true} {
				var failed bool
				for _, rule := range oauthModule.memberRules(path.Root("oauth")) {
					failed = failed || rule.Check(ctx, cfg(tt.oauth), unknownIsSet).HasError()
				}
				if want := map[bool]bool{false: tt.validateOK, true: tt.planOK}[unknownIsSet]; failed == want {
					t.Errorf("unknownIsSet=%v: failed=%v", unknownIsSet, failed)
				}
			}
		})
	}
}
