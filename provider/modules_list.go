package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The modules of internal/api/modules.go, each with its members, model and conversions.

type backendModuleModel struct {
	Enabled   types.Bool   `tfsdk:"enabled"`
	BackendID types.String `tfsdk:"backend_id"`
}

var backendModule = module[backendModuleModel, api.BackendModuleRequest, api.BackendModule]{
	members: []member{enabledMember(), {name: "backend_id", kind: kindString, required: true, desc: "ID of the backend (any kind) that serves the traffic."}},
	expand: func(m, _ *backendModuleModel) *api.BackendModuleRequest {
		return &api.BackendModuleRequest{Enabled: boolPtr(m.Enabled), BackendID: optional(m.BackendID)}
	},
	flatten: func(r *api.BackendModule, _ *backendModuleModel) backendModuleModel {
		return backendModuleModel{Enabled: types.BoolValue(r.Enabled), BackendID: types.StringValue(r.Backend.ID)}
	},
}

type ipRestrictionModuleModel struct {
	Enabled     types.Bool `tfsdk:"enabled"`
	IPPolicyIDs types.List `tfsdk:"ip_policy_ids"`
}

var ipRestrictionModule = module[ipRestrictionModuleModel, api.IPRestrictionModuleRequest, api.IPRestrictionModule]{
	members: []member{enabledMember(), {name: "ip_policy_ids", kind: kindStrings, required: true, lists: nonEmptyIDs(rules.MaxIPPolicies), desc: "IDs of the IP policies whose rules decide which source addresses get through; at least one."}},
	expand: func(m, _ *ipRestrictionModuleModel) *api.IPRestrictionModuleRequest {
		return &api.IPRestrictionModuleRequest{Enabled: boolPtr(m.Enabled), IPPolicyIDs: stringsOf(m.IPPolicyIDs)}
	},
	flatten: func(r *api.IPRestrictionModule, _ *ipRestrictionModuleModel) ipRestrictionModuleModel {
		return ipRestrictionModuleModel{Enabled: types.BoolValue(r.Enabled), IPPolicyIDs: stringList(refIDs(r.IPPolicies))}
	},
	check: func(r *api.IPRestrictionModuleRequest) error { return rules.IPPolicyIDs(r.IPPolicyIDs) },
}

type mutualTLSModuleModel struct {
	Enabled                 types.Bool `tfsdk:"enabled"`
	CertificateAuthorityIDs types.List `tfsdk:"certificate_authority_ids"`
}

var mutualTLSModule = module[mutualTLSModuleModel, api.MutualTLSModuleRequest, api.MutualTLSModule]{
	members: []member{enabledMember(), {name: "certificate_authority_ids", kind: kindStrings, required: true, lists: nonEmptyIDs(rules.MaxCertificateAuthorities), desc: fmt.Sprintf("IDs of the certificate authorities (`ca_…`) a client certificate must be signed by; 1 to %d.", rules.MaxCertificateAuthorities)}},
	expand: func(m, _ *mutualTLSModuleModel) *api.MutualTLSModuleRequest {
		return &api.MutualTLSModuleRequest{Enabled: boolPtr(m.Enabled), CertificateAuthorityIDs: stringsOf(m.CertificateAuthorityIDs)}
	},
	flatten: func(r *api.MutualTLSModule, _ *mutualTLSModuleModel) mutualTLSModuleModel {
		return mutualTLSModuleModel{Enabled: types.BoolValue(r.Enabled), CertificateAuthorityIDs: stringList(refIDs(r.CertificateAuthorities))}
	},
	check: func(r *api.MutualTLSModuleRequest) error {
		return rules.CertificateAuthorityIDs(r.CertificateAuthorityIDs)
	},
}

func refIDs(refs []api.Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.ID
	}
	return out
}

type tlsTerminationModuleModel struct {
	Enabled     types.Bool   `tfsdk:"enabled"`
	TerminateAt types.String `tfsdk:"terminate_at"`
	MinVersion  types.String `tfsdk:"min_version"`
}

// tlsTerminationModule is the module of a TLS edge ("tls") or of an HTTPS edge ("https"),
// where terminate_at is always "edge" and cannot be set.
func tlsTerminationModule(edge string) module[tlsTerminationModuleModel, api.TLSTerminationModuleRequest, api.TLSTerminationModule] {
	terminateAt := member{name: "terminate_at", kind: kindString, def: "edge", strings: oneOf(rules.TerminateAts...), desc: "Where TLS ends: `edge` (default) or `upstream` (passed through; `min_version` must then be null)."}
	if edge == "https" {
		terminateAt = member{name: "terminate_at", kind: kindString, derived: true, desc: "Always `edge` on an HTTPS edge."}
	}
	return module[tlsTerminationModuleModel, api.TLSTerminationModuleRequest, api.TLSTerminationModule]{
		members: []member{enabledMember(), terminateAt, {name: "min_version", kind: kindString, strings: oneOf(rules.TLSVersions...), desc: "Lowest TLS version accepted: `1.0`, `1.1`, `1.2` or `1.3`. Null means the service's default (1.2)."}},
		expand: func(m, _ *tlsTerminationModuleModel) *api.TLSTerminationModuleRequest {
			r := &api.TLSTerminationModuleRequest{Enabled: boolPtr(m.Enabled), MinVersion: optional(m.MinVersion)}
			if edge != "https" {
				r.TerminateAt = optional(m.TerminateAt)
			}
			return r
		},
		flatten: func(r *api.TLSTerminationModule, _ *tlsTerminationModuleModel) tlsTerminationModuleModel {
			return tlsTerminationModuleModel{Enabled: types.BoolValue(r.Enabled), TerminateAt: types.StringValue(r.TerminateAt), MinVersion: types.StringPointerValue(r.MinVersion)}
		},
		check: func(r *api.TLSTerminationModuleRequest) error { _, err := rules.TLSTermination(r, edge); return err },
	}
}

type trafficPolicyModuleModel struct {
	Enabled types.Bool  `tfsdk:"enabled"`
	Value   policyValue `tfsdk:"value"`
}

// trafficPolicyModule is the module of an owner (rules.PolicyOwner…), whose phases differ.
func trafficPolicyModule(owner string) module[trafficPolicyModuleModel, api.TrafficPolicyModuleRequest, api.TrafficPolicyModule] {
	return module[trafficPolicyModuleModel, api.TrafficPolicyModuleRequest, api.TrafficPolicyModule]{
		members: []member{enabledMember(), {name: "value", kind: kindPolicy, required: true, desc: "The policy document, JSON or YAML (e.g. `jsonencode({...})`); reformatting it is no change."}},
		expand: func(m, _ *trafficPolicyModuleModel) *api.TrafficPolicyModuleRequest {
			return &api.TrafficPolicyModuleRequest{Enabled: boolPtr(m.Enabled), Value: policyPtr(m.Value)}
		},
		flatten: func(r *api.TrafficPolicyModule, _ *trafficPolicyModuleModel) trafficPolicyModuleModel {
			return trafficPolicyModuleModel{Enabled: types.BoolValue(r.Enabled), Value: policyOf(r.Value)}
		},
		check: func(r *api.TrafficPolicyModuleRequest) error { _, err := rules.TrafficPolicy(r, owner); return err },
	}
}

type toggleModuleModel struct {
	Enabled types.Bool `tfsdk:"enabled"`
}

// toggleModule is compression and websocket_tcp_converter.
var toggleModule = module[toggleModuleModel, api.ToggleModuleRequest, api.ToggleModule]{
	members: []member{enabledMember()},
	expand: func(m, _ *toggleModuleModel) *api.ToggleModuleRequest {
		return &api.ToggleModuleRequest{Enabled: boolPtr(m.Enabled)}
	},
	flatten: func(r *api.ToggleModule, _ *toggleModuleModel) toggleModuleModel {
		return toggleModuleModel{Enabled: types.BoolValue(r.Enabled)}
	},
}

type circuitBreakerModuleModel struct {
	Enabled                  types.Bool    `tfsdk:"enabled"`
	TrippedDuration          types.Int64   `tfsdk:"tripped_duration"`
	RollingWindow            types.Int64   `tfsdk:"rolling_window"`
	NumBuckets               types.Int64   `tfsdk:"num_buckets"`
	VolumeThreshold          types.Int64   `tfsdk:"volume_threshold"`
	ErrorThresholdPercentage types.Float64 `tfsdk:"error_threshold_percentage"`
}

var circuitBreakerModule = module[circuitBreakerModuleModel, api.CircuitBreakerModuleRequest, api.CircuitBreakerModule]{
	members: []member{
		enabledMember(),
		{name: "tripped_duration", kind: kindInt, def: int64(rules.DefaultTrippedDuration), desc: "Seconds the breaker stays open once tripped; > 0."},
		{name: "rolling_window", kind: kindInt, def: int64(rules.DefaultRollingWindow), desc: "Seconds of statistics the breaker looks at; > 0."},
		{name: "num_buckets", kind: kindInt, def: int64(rules.DefaultNumBuckets), desc: fmt.Sprintf("Buckets the window is divided into; 1 to %d.", rules.MaxCircuitBreakerBuckets)},
		{name: "volume_threshold", kind: kindInt, def: int64(rules.DefaultVolumeThreshold), desc: "Requests in the window before the breaker may trip."},
		{name: "error_threshold_percentage", kind: kindFloat, def: float64(rules.DefaultErrorThresholdPercentage), desc: "Share of failed requests (0.0 to 1.0) that trips the breaker."},
	},
	expand: func(m, _ *circuitBreakerModuleModel) *api.CircuitBreakerModuleRequest {
		return &api.CircuitBreakerModuleRequest{
			Enabled: boolPtr(m.Enabled), TrippedDuration: int64Ptr(m.TrippedDuration), RollingWindow: int64Ptr(m.RollingWindow),
			NumBuckets: int64Ptr(m.NumBuckets), VolumeThreshold: int64Ptr(m.VolumeThreshold), ErrorThresholdPercentage: float64Ptr(m.ErrorThresholdPercentage),
		}
	},
	flatten: func(r *api.CircuitBreakerModule, _ *circuitBreakerModuleModel) circuitBreakerModuleModel {
		return circuitBreakerModuleModel{
			Enabled: types.BoolValue(r.Enabled), TrippedDuration: types.Int64Value(r.TrippedDuration), RollingWindow: types.Int64Value(r.RollingWindow),
			NumBuckets: types.Int64Value(r.NumBuckets), VolumeThreshold: types.Int64Value(r.VolumeThreshold), ErrorThresholdPercentage: types.Float64Value(r.ErrorThresholdPercentage),
		}
	},
	check: func(r *api.CircuitBreakerModuleRequest) error { _, err := rules.CircuitBreaker(r); return err },
}

type headersModuleModel struct {
	Enabled types.Bool `tfsdk:"enabled"`
	Add     types.Map  `tfsdk:"add"`
	Remove  types.List `tfsdk:"remove"`
}

// headersModule is request_headers and response_headers.
var headersModule = module[headersModuleModel, api.HeadersModuleRequest, api.HeadersModule]{
	members: []member{
		enabledMember(),
		{name: "add", kind: kindStringMap, desc: "Headers to add, name → value. The API lowercases names; a name differing only in case from the state's is no change."},
		{name: "remove", kind: kindStrings, desc: "Names of headers to remove."},
	},
	expand: func(m, _ *headersModuleModel) *api.HeadersModuleRequest {
		return &api.HeadersModuleRequest{Enabled: boolPtr(m.Enabled), Add: stringMapOf(m.Add), Remove: stringsOf(m.Remove)}
	},
	flatten: func(r *api.HeadersModule, prior *headersModuleModel) headersModuleModel {
		out := headersModuleModel{Enabled: types.BoolValue(r.Enabled), Remove: listValue(r.Remove, prior, func(m *headersModuleModel) types.List { return m.Remove })}
		switch {
		case prior != nil && len(r.Add) == 0 && prior.Add.IsNull():
			out.Add = types.MapNull(types.StringType)
		case prior != nil && sameHeaders(stringMapOf(prior.Add), r.Add):
			out.Add = prior.Add // the configured spelling of the names
		default:
			out.Add = stringMap(r.Add)
		}
		return out
	},
	check: func(r *api.HeadersModuleRequest) error { _, err := rules.Headers(r); return err },
}

type webhookVerificationModuleModel struct {
	Enabled         types.Bool   `tfsdk:"enabled"`
	Provider        types.String `tfsdk:"provider"`
	Secret          types.String `tfsdk:"secret"`
	SecretWO        types.String `tfsdk:"secret_wo"`
	SecretWOVersion types.Int64  `tfsdk:"secret_wo_version"`
}

var webhookVerificationModule = module[webhookVerificationModuleModel, api.WebhookVerificationModuleRequest, api.WebhookVerificationModule]{
	members: append([]member{
		enabledMember(),
		{name: "provider", kind: kindString, required: true, desc: "The webhook provider, e.g. `github`, `stripe`, `sns` (case-insensitive, kept as given)."},
	}, secretMembers("secret", "secret the provider signs with; every provider but `sns` needs one, `sns` takes none")...),
	expand: func(m, config *webhookVerificationModuleModel) *api.WebhookVerificationModuleRequest {
		return &api.WebhookVerificationModuleRequest{Enabled: boolPtr(m.Enabled), Provider: optional(m.Provider), Secret: secretOf(m.Secret, config.SecretWO)}
	},
	flatten: func(r *api.WebhookVerificationModule, prior *webhookVerificationModuleModel) webhookVerificationModuleModel {
		out := webhookVerificationModuleModel{Enabled: types.BoolValue(r.Enabled), Provider: types.StringValue(r.Provider), SecretWO: types.StringNull()}
		secret := &r.Secret
		if r.Secret == "" {
			secret = nil
		}
		out.Secret, out.SecretWOVersion = secretState(secret, prior, func(m *webhookVerificationModuleModel) (types.String, types.Int64) {
			return m.Secret, m.SecretWOVersion
		})
		return out
	},
	rules: secretRules(path.Empty(), "secret"),
	check: func(r *api.WebhookVerificationModuleRequest) error {
		_, err := rules.WebhookVerification(r)
		return err
	},
}

type userAgentFilterModuleModel struct {
	Enabled types.Bool `tfsdk:"enabled"`
	Allow   types.List `tfsdk:"allow"`
	Deny    types.List `tfsdk:"deny"`
}

var userAgentFilterModule = module[userAgentFilterModuleModel, api.UserAgentFilterModuleRequest, api.UserAgentFilterModule]{
	members: []member{
		enabledMember(),
		{name: "allow", kind: kindStrings, desc: "RE2 patterns of User-Agents to let through; an allow match overrides deny. `^$` allows requests without one."},
		{name: "deny", kind: kindStrings, desc: "RE2 patterns of User-Agents to refuse."},
	},
	expand: func(m, _ *userAgentFilterModuleModel) *api.UserAgentFilterModuleRequest {
		return &api.UserAgentFilterModuleRequest{Enabled: boolPtr(m.Enabled), Allow: stringsOf(m.Allow), Deny: stringsOf(m.Deny)}
	},
	flatten: func(r *api.UserAgentFilterModule, prior *userAgentFilterModuleModel) userAgentFilterModuleModel {
		return userAgentFilterModuleModel{
			Enabled: types.BoolValue(r.Enabled),
			Allow:   listValue(r.Allow, prior, func(m *userAgentFilterModuleModel) types.List { return m.Allow }),
			Deny:    listValue(r.Deny, prior, func(m *userAgentFilterModuleModel) types.List { return m.Deny }),
		}
	},
	check: func(r *api.UserAgentFilterModuleRequest) error { _, err := rules.UserAgentFilter(r); return err },
}

// moduleDescription names a module for its owner's schema.
func moduleDescription(name, what string) string {
	return fmt.Sprintf("The `%s` module: %s Null when not configured; removing it removes it on the server.", name, strings.TrimSpace(what))
}
