package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestEventDestinationSendSecret: which secret a create or PATCH carries.
func TestEventDestinationSendSecret(t *testing.T) {
	secret := func(value, wo string, version int64) eventSecret {
		s := eventSecret{value: new(types.String), wo: new(types.String), version: new(types.Int64)}
		*s.value, *s.wo, *s.version = types.StringNull(), types.StringNull(), types.Int64Null()
		if value != "" {
			*s.value = types.StringValue(value)
		}
		if wo != "" {
			*s.wo = types.StringValue(wo)
		}
		if version != 0 {
			*s.version = types.Int64Value(version)
		}
		return s
	}
	ptr := func(s eventSecret) *eventSecret { return &s }
	for _, tt := range []struct {
		name         string
		plan, config eventSecret
		prior        *eventSecret
		want         string
	}{
		{"value", secret("v", "", 0), secret("v", "", 0), ptr(secret("v", "", 0)), "v"},
		{"write-only on create", secret("", "", 1), secret("", "w", 1), nil, "w"},
		{"write-only, same version: kept", secret("", "", 1), secret("", "w2", 1), ptr(secret("", "", 1)), ""},
		{"write-only, new version", secret("", "", 2), secret("", "w2", 2), ptr(secret("", "", 1)), "w2"},
		{"write-only without version, unchanged: kept", secret("", "", 0), secret("", "w", 0), ptr(secret("", "", 0)), ""},
		{"from value to write-only", secret("", "", 0), secret("", "w", 0), ptr(secret("v", "", 0)), "w"},
		{"write-only, no config at this place", secret("", "", 0), eventSecret{}, nil, ""},
	} {
		if got := sendSecret(tt.plan, tt.config, tt.prior); got != tt.want {
			t.Errorf("%s: sent %q, want %q", tt.name, got, tt.want)
		}
	}
}
