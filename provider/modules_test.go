package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// roundTrip sends a model through its module as a resource does: plan -> request ->
// (the server's answer, from the rules the server applies) -> state, and returns the state.
func roundTrip[M, Req, Resp any](t *testing.T, d module[M, Req, Resp], plan M, answer func(*Req) (*Resp, error)) M {
	t.Helper()
	ctx := context.Background()
	obj, diags := types.ObjectValueFrom(ctx, d.attrTypes(), plan)
	if diags.HasError() {
		t.Fatal(diags)
	}
	req := d.request(ctx, obj, obj, &diags)
	if diags.HasError() || req == nil {
		t.Fatalf("request: %v", diags)
	}
	resp, err := answer(req)
	if err != nil {
		t.Fatalf("the server refuses %+v: %v", req, err)
	}
	state := d.value(ctx, resp, obj, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var out M
	if diags := state.As(ctx, &out, basetypes.ObjectAsOptions{}); diags.HasError() {
		t.Fatal(diags)
	}
	if !state.Equal(obj) {
		t.Errorf("state differs from plan:\nplan  %v\nstate %v", obj, state)
	}
	// The data source shows the same answer without failing.
	if v := d.dataValue(ctx, resp, &diags); diags.HasError() || v.IsNull() {
		t.Errorf("data source value: %v %v", v, diags)
	}
	return out
}

func TestModulesRoundTrip(t *testing.T) {
	on, null := types.BoolValue(true), types.ListNull(types.StringType)
	t.Run("ip_restriction", func(t *testing.T) {
		roundTrip(t, ipRestrictionModule, ipRestrictionModuleModel{Enabled: on, IPPolicyIDs: stringList([]string{"ipp_1", "ipp_2"})}, func(r *api.IPRestrictionModuleRequest) (*api.IPRestrictionModule, error) {
			refs := []api.Ref{}
			for _, id := range r.IPPolicyIDs {
				refs = append(refs, api.Ref{ID: id})
			}
			return &api.IPRestrictionModule{Enabled: r.Enabled == nil || *r.Enabled, IPPolicies: refs}, rules.IPPolicyIDs(r.IPPolicyIDs)
		})
	})
	t.Run("tls_termination upstream", func(t *testing.T) {
		roundTrip(t, tlsTerminationModule("tls"), tlsTerminationModuleModel{Enabled: types.BoolValue(false), TerminateAt: types.StringValue("upstream"), MinVersion: types.StringNull()}, func(r *api.TLSTerminationModuleRequest) (*api.TLSTerminationModule, error) {
			return rules.TLSTermination(r, "tls")
		})
	})
	t.Run("circuit_breaker", func(t *testing.T) {
		roundTrip(t, circuitBreakerModule, circuitBreakerModuleModel{Enabled: on, TrippedDuration: types.Int64Value(5), RollingWindow: types.Int64Value(10), NumBuckets: types.Int64Value(10), VolumeThreshold: types.Int64Value(20), ErrorThresholdPercentage: types.Float64Value(0.25)}, rules.CircuitBreaker)
	})
	t.Run("headers, unset lists stay null", func(t *testing.T) {
		roundTrip(t, headersModule, headersModuleModel{Enabled: on, Add: types.MapNull(types.StringType), Remove: null}, rules.Headers)
	})
	t.Run("headers, configured case kept", func(t *testing.T) {
		got := roundTrip(t, headersModule, headersModuleModel{Enabled: on, Add: stringMap(map[string]string{"X-Env": "prod"}), Remove: stringList([]string{})}, rules.Headers)
		if _, ok := got.Add.Elements()["X-Env"]; !ok {
			t.Errorf("add = %v, want the configured spelling", got.Add)
		}
	})
	t.Run("user_agent_filter", func(t *testing.T) {
		roundTrip(t, userAgentFilterModule, userAgentFilterModuleModel{Enabled: on, Allow: stringList([]string{"(?i)curl"}), Deny: null}, rules.UserAgentFilter)
	})
	t.Run("traffic_policy", func(t *testing.T) {
		roundTrip(t, trafficPolicyModule(rules.PolicyOwnerHTTPSRoute), trafficPolicyModuleModel{Enabled: on, Value: policyOf(`{"on_http_request":[{"expressions":["req.url.path == '/x'"],"actions":[{"type":"deny"}]}]}`)}, func(r *api.TrafficPolicyModuleRequest) (*api.TrafficPolicyModule, error) {
			return rules.TrafficPolicy(r, rules.PolicyOwnerHTTPSRoute)
		})
	})
	t.Run("toggle", func(t *testing.T) {
		roundTrip(t, toggleModule, toggleModuleModel{Enabled: on}, func(r *api.ToggleModuleRequest) (*api.ToggleModule, error) { return rules.Toggle(r), nil })
	})
	t.Run("backend", func(t *testing.T) {
		roundTrip(t, backendModule, backendModuleModel{Enabled: on, BackendID: types.StringValue("bkdsc_1")}, func(r *api.BackendModuleRequest) (*api.BackendModule, error) {
			return &api.BackendModule{Enabled: *r.Enabled, Backend: api.Ref{ID: *r.BackendID}}, nil
		})
	})
}

// TestModuleRequestUnknown: unknown and null members are never sent.
func TestModuleRequestUnknown(t *testing.T) {
	r := circuitBreakerModule.expand(&circuitBreakerModuleModel{Enabled: types.BoolUnknown(), TrippedDuration: types.Int64Null(), NumBuckets: types.Int64Value(3)}, nil)
	if r.Enabled != nil || r.TrippedDuration != nil || r.NumBuckets == nil || *r.NumBuckets != 3 {
		t.Errorf("request %+v", r)
	}
	ctx := context.Background()
	var diags diag.Diagnostics
	if circuitBreakerModule.request(ctx, types.ObjectNull(circuitBreakerModule.attrTypes()), types.ObjectNull(circuitBreakerModule.attrTypes()), &diags) != nil {
		t.Error("a null module must send nothing")
	}
	if v := circuitBreakerModule.value(ctx, nil, types.ObjectNull(circuitBreakerModule.attrTypes()), &diags); !v.IsNull() {
		t.Error("an absent module must be null")
	}
}

func TestPolicySemanticEquality(t *testing.T) {
	doc := `{"on_http_request":[{"name":"a","expressions":["true"],"actions":[{"type":"deny","config":{"status_code":403}}]}]}`
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{doc, doc, true},
		{doc, "{\n  \"on_http_request\": [\n    {\"actions\": [{\"config\": {\"status_code\": 403}, \"type\": \"deny\"}], \"expressions\": [\"true\"], \"name\": \"a\"}\n  ]\n}", true},
		{doc, "on_http_request:\n  - name: a\n    expressions: [\"true\"]\n    actions:\n      - type: deny\n        config: {status_code: 403}\n", true},
		{doc, `{"on_http_request":[{"name":"b","expressions":["true"],"actions":[{"type":"deny","config":{"status_code":403}}]}]}`, false},
		{doc, `{"on_http_request":[{"name":"a","expressions":["true"],"actions":[{"type":"deny","config":{"status_code":404}}]}]}`, false},
		{"not: [valid", "not: [valid", true},
		{"not: [valid", "not:  [valid", false},
	} {
		got, diags := policyOf(tt.a).StringSemanticEquals(context.Background(), policyOf(tt.b))
		if diags.HasError() || got != tt.same {
			t.Errorf("%q ~ %q = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// TestModuleCheck: the server's value rules run at plan time on known modules, name the
// member at fault, and leave null and unknown values alone.
func TestModuleCheck(t *testing.T) {
	ctx := context.Background()
	attrs := headersModule.attrTypes()
	obj := func(add attr.Value) types.Object {
		return types.ObjectValueMust(attrs, map[string]attr.Value{"enabled": types.BoolValue(true), "add": add, "remove": types.ListNull(types.StringType)})
	}
	v := headersModule.resourceAttribute("").Validators[0]
	for _, tt := range []struct {
		name  string
		value types.Object
		ok    bool
	}{
		{"valid", obj(stringMap(map[string]string{"X-A": "1"})), true},
		{"bad name", obj(stringMap(map[string]string{"X A": "1"})), false},
		{"case duplicate", obj(stringMap(map[string]string{"X-A": "1", "x-a": "2"})), false},
		{"null module", types.ObjectNull(attrs), true},
		{"unknown module", types.ObjectUnknown(attrs), true},
		{"unknown value", obj(types.MapValueMust(types.StringType, map[string]attr.Value{"X A": types.StringUnknown()})), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var resp validator.ObjectResponse
			v.ValidateObject(ctx, validator.ObjectRequest{Path: path.Root("request_headers"), ConfigValue: tt.value}, &resp)
			if resp.Diagnostics.HasError() == tt.ok {
				t.Errorf("diagnostics %v", resp.Diagnostics)
			}
		})
	}
}

// validateResource runs the provider's ValidateResourceConfig, as `terraform validate` and
// every plan do first, on a configuration given as JSON (attributes left out are null), and
// returns its error diagnostics.
func validateResource(t *testing.T, typeName, config string) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	server, err := providerFactories["warren"]()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas[typeName].ValueType()
	value, err := tftypes.ValueFromJSONWithOpts([]byte(config), typ, tftypes.ValueFromJSONOpts{})
	if err != nil {
		t.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, value)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	var errs []*tfprotov6.Diagnostic
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			errs = append(errs, d)
		}
	}
	return errs
}

// One diagnostic per problem, on the member at fault, and every problem of a module.
func TestModuleDiagnostics(t *testing.T) {
	route := func(modules string) string {
		return `{"edge_id": "` + ids.New(ids.HTTPSEdge) + `", "match_type": "path_prefix", "match": "/", ` + modules + `}`
	}
	for _, tt := range []struct {
		name, config string
		want         []string // each diagnostic's attribute path and a part of its text
	}{
		{"oidc without a secret", route(`"oidc": {"issuer": "https://idp.example.com", "client_id": "cid"}`),
			[]string{`oidc: exactly one of oidc.client_secret, oidc.client_secret_wo must be set`}},
		{"two oauth providers", route(`"oauth": {"provider": {"google": {"client_id": "a", "client_secret": "b"}, "gitlab": {"client_id": "c", "client_secret": "d"}}}`),
			[]string{`oauth.provider.google: oauth.provider.google and oauth.provider.gitlab are set`}},
		{"bad num_buckets and error_threshold_percentage", route(`"circuit_breaker": {"num_buckets": 0, "error_threshold_percentage": 50}`),
			[]string{`circuit_breaker.num_buckets: num_buckets must be from 1`, `circuit_breaker.error_threshold_percentage: error_threshold_percentage must be from 0.0 to 1.0`}},
		{"one bad member", route(`"circuit_breaker": {"num_buckets": 500}`),
			[]string{`circuit_breaker.num_buckets: num_buckets must be from 1`}},
		{"good module", route(`"circuit_breaker": {"num_buckets": 5, "error_threshold_percentage": 0.5}`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			diags := validateResource(t, "warren_https_edge_route", tt.config)
			var got []string
			for _, d := range diags {
				var at []string
				if d.Attribute != nil {
					for _, step := range d.Attribute.Steps() {
						if name, ok := step.(tftypes.AttributeName); ok {
							at = append(at, string(name))
						}
					}
				}
				got = append(got, strings.Join(at, ".")+": "+d.Detail)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d diagnostics, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(got[i], strings.SplitN(want, ": ", 2)[0]+": ") || !strings.Contains(got[i], strings.SplitN(want, ": ", 2)[1]) {
					t.Errorf("diagnostic %d is %q, want %q", i, got[i], want)
				}
			}
		})
	}
}
