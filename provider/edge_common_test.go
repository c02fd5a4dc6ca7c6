package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
)

// TestHostportsValidator: each known hostport is checked as the server does, duplicates
// compared in the API's form; null and unknown values (known at apply) pass.
func TestHostportsValidator(t *testing.T) {
	list := func(items ...attr.Value) types.List { return types.ListValueMust(types.StringType, items) }
	s := types.StringValue
	for _, tt := range []struct {
		name  string
		value types.List
		ok    bool
	}{
		{"null list", types.ListNull(types.StringType), true},
		{"unknown list", types.ListUnknown(types.StringType), true},
		{"empty", list(), true},
		{"valid", list(s("a.example.org:443"), s("b.example.org:443")), true},
		{"unknown element", list(types.StringUnknown(), s("b.example.org:443")), true},
		{"null element", list(types.StringNull()), true},
		{"no port", list(s("a.example.org")), false},
		{"port 0", list(s("a.example.org:0")), false},
		{"duplicate in another case", list(s("a.example.org:443"), s("A.Example.org:443")), false},
		{"duplicate with a leading zero", list(s("a.example.org:443"), s("a.example.org:0443")), false},
	} {
		resp := &validator.ListResponse{}
		hostportsValidator{}.ValidateList(context.Background(), validator.ListRequest{Path: path.Root("hostports"), ConfigValue: tt.value}, resp)
		if resp.Diagnostics.HasError() == tt.ok {
			t.Errorf("%s: errors %v, want ok=%v", tt.name, resp.Diagnostics, tt.ok)
		}
	}
}

// TestHostportsSpelling: the state keeps the configured spelling when the API's means the
// same, and a plan that only respells the state's hostports keeps the state's.
func TestHostportsSpelling(t *testing.T) {
	configured := stringList([]string{"Shop.Example.ORG:443"})
	if got := hostportsValue([]string{"shop.example.org:443"}, configured); !got.Equal(configured) {
		t.Errorf("state %v, want the configured spelling", got)
	}
	if got := hostportsValue([]string{"other.example.org:443"}, configured); !got.Equal(stringList([]string{"other.example.org:443"})) {
		t.Errorf("state %v, want the API's value", got)
	}
	state := stringList([]string{"shop.example.org:443"})
	for _, tt := range []struct {
		name       string
		plan, want types.List
	}{
		{"respelled", configured, state},
		{"changed", stringList([]string{"x.example.org:443"}), stringList([]string{"x.example.org:443"})},
		{"unknown element", types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()}), types.ListValueMust(types.StringType, []attr.Value{types.StringUnknown()})},
	} {
		resp := &planmodifier.ListResponse{PlanValue: tt.plan}
		planmodifiers.NormalizedStrings(hostportKey).PlanModifyList(context.Background(), planmodifier.ListRequest{StateValue: state, PlanValue: tt.plan}, resp)
		if !resp.PlanValue.Equal(tt.want) {
			t.Errorf("%s: plan %v, want %v", tt.name, resp.PlanValue, tt.want)
		}
	}
}

// TestKeepSamePolicy: a reformatted document plans the state's; another document, a null or
// an unknown one is left alone.
func TestKeepSamePolicy(t *testing.T) {
	state := types.StringValue(`{"on_tcp_connect":[{"actions":[{"type":"deny"}]}]}`)
	for _, tt := range []struct {
		name       string
		plan, want types.String
	}{
		{"YAML", types.StringValue("on_tcp_connect:\n  - actions: [{type: deny}]\n"), state},
		{"another", types.StringValue(`{"on_tcp_connect":[]}`), types.StringValue(`{"on_tcp_connect":[]}`)},
		{"unknown", types.StringUnknown(), types.StringUnknown()},
		{"null", types.StringNull(), types.StringNull()},
	} {
		resp := &planmodifier.StringResponse{PlanValue: tt.plan}
		keepSamePolicy.PlanModifyString(context.Background(), planmodifier.StringRequest{StateValue: state, PlanValue: tt.plan}, resp)
		if !resp.PlanValue.Equal(tt.want) {
			t.Errorf("%s: plan %v, want %v", tt.name, resp.PlanValue, tt.want)
		}
	}
}

// moduleGone checks through the API that an edge's modules are not configured (GET 404).
func moduleGone(addr string, getModule func(ctx context.Context, id, module string, out any) error, modules ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		for _, m := range modules {
			var out map[string]any
			err := getModule(context.Background(), rs.Primary.ID, m, &out)
			if err == nil {
				return fmt.Errorf("%s still has the module %s on the server: %v", addr, m, out)
			}
			if !client.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
}

func emptyPlan() resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
}

func moduleValue(addr, module, member string, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(module).AtMapKey(member), value)
}

// TestAccEdgeValidation: the rules over edges fail the plan, including when a member comes
// from another resource and is known only at apply.
func TestAccEdgeValidation(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "v")
	tcp := func(body string) string {
		return env.config(`resource "warren_tcp_edge" "t" {
  %s
}`, body)
	}
	tls := func(body string) string {
		return env.config(`
resource "warren_certificate_authority" "ca" { ca_pem = %q }
resource "warren_tls_edge" "t" {
  %s
}`, pki.caPEM, body)
	}
	for _, tt := range []struct {
		name, config, err string
	}{
		{"hostport without port", tcp(`hostports = ["tcp.example.org"]`), `(?s)Invalid hostport.*"tcp.example.org" must be hostname:port`},
		{"hostport port out of range", tcp(`hostports = ["tcp.example.org:70000"]`), `(?s)port of .* must be from 1 to 65535`},
		{"hostport twice, in another case", tcp(`hostports = ["a.example.org:1", "A.example.org:1"]`), `(?s)Duplicate hostport.*"A.example.org:1" is listed more than once`},
		{"empty IP policy list", tcp(`ip_restriction = { ip_policy_ids = [] }`), `needs at least one IP policy`},
		{"HTTP phase on a TCP edge", tcp(`traffic_policy = { value = jsonencode({ on_http_request = [{ actions = [{ type = "deny" }] }] }) }`), `(?s)on_http_request is not allowed in the traffic policy of a TCP edge`},
		{"unknown action type", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "teleport" }] }] }) }`), `(?s)unknown\s+type\s+"teleport".\s+Supported\s+types\s+are\s+add-headers,\s+close-connection,`},
		{"bad traffic policy action config", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "restrict-ips", config = { allow = ["not-a-cidr"] } }] }] }) }`), `(?s)on_tcp_connect\s+rule\s+1:\s+action\s+1\s+\(restrict-ips\):\s+allow:\s+"not-a-cidr"\s+is\s+not\s+a\s+CIDR\s+range`},
		{"traffic policy action not run here", tcp(`traffic_policy = { value = jsonencode({ on_tcp_connect = [{ actions = [{ type = "terminate-tls" }] }] }) }`), `(?s)action\s+1\s+\(terminate-tls\):\s+this\s+server\s+does\s+not\s+run\s+this\s+action\s+type`},
		{"min_version with upstream", tls(`tls_termination = {
    terminate_at = "upstream"
    min_version  = "1.2"
  }`), `(?s)min_version must be null when terminate_at is .upstream`},
		// The CA's ID is known only at apply: the module is configured all the same.
		{"mutual TLS with upstream", tls(`tls_termination = { terminate_at = "upstream" }
  mutual_tls      = { certificate_authority_ids = [warren_certificate_authority.ca.id] }`), `(?s)mutual_tls.*terminate_at is "upstream"`},
		{"unknown terminate_at", tls(`tls_termination = { terminate_at = "origin" }`), `Invalid terminate_at "origin"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: providerFactories,
				Steps:                    []resource.TestStep{{Config: tt.config, PlanOnly: true, ExpectError: regexp.MustCompile(tt.err)}},
			})
		})
	}
}
