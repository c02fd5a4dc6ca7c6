package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
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
