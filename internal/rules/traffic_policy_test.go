package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestTrafficPolicy(t *testing.T) {
	const routeYAML = `# comments and YAML layout are kept as sent
on_http_request:
  - name: block bots
    expressions:
      - "req.headers['user-agent'][0].contains('bot')"
      - "!inCidrRange(conn.client_ip, '10.0.0.0/8')"
    actions:
      - type: deny
        config:
          status_code: 403
  - actions: [{type: log}]
on_http_response:
  - expressions: ["res.status_code >= 500 && req.url.path.startsWith('/api')"]
    actions:
      - type: custom-response
        config: {status_code: 503, body: "down"}
`
	const tcpJSON = `{"on_tcp_connect":[{"name":"office only","expressions":["!inCidrRanges(conn.client_ip, ['192.0.2.0/24'])"],"actions":[{"type":"deny"}]}]}`
	rules := func(n int) string {
		var b strings.Builder
		b.WriteString("on_http_request:\n")
		for range n {
			b.WriteString("  - actions: [{type: log}]\n")
		}
		return b.String()
	}
	for _, tt := range []struct {
		name, value, owner string
		enabled            *bool
		code               string
		msg                string // a part of the message
	}{
		{"route yaml", routeYAML, PolicyOwnerHTTPSRoute, nil, "", ""},
		{"route disabled", routeYAML, PolicyOwnerHTTPSRoute, ptr(false), "", ""},
		{"tcp json", tcpJSON, PolicyOwnerTCPEdge, nil, "", ""},
		{"tls json", tcpJSON, PolicyOwnerTLSEdge, nil, "", ""},
		{"empty phases", `{}`, PolicyOwnerTLSEdge, nil, "", ""},
		{"null phase", "on_tcp_connect:\n", PolicyOwnerTCPEdge, nil, "", ""},
		{"rule without expressions", `{"on_tcp_connect":[{"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "", ""},
		{"base64 macro", `{"on_http_request":[{"expressions":["base64.decode(getReqHeader('x-a')[0]) == b'x'"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerHTTPSRoute, nil, "", ""},
		{"rule cap", rules(MaxTrafficPolicyRules), PolicyOwnerHTTPSRoute, nil, "", ""},

		{"missing", "", PolicyOwnerTCPEdge, nil, "ERR_2236", "required"},
		{"blank", " \n", PolicyOwnerTCPEdge, nil, "ERR_2236", "required"},
		{"comment only", "# nothing", PolicyOwnerTCPEdge, nil, "ERR_2236", "empty"},
		{"not yaml", "on_tcp_connect: [", PolicyOwnerTCPEdge, nil, "ERR_2236", "does not parse"},
		{"two documents", "on_tcp_connect: []\n---\non_tcp_connect: []\n", PolicyOwnerTCPEdge, nil, "ERR_2236", "single YAML document"},
		{"scalar", `"deny"`, PolicyOwnerTCPEdge, nil, "ERR_2236", "mapping from phase names"},
		{"list", `[]`, PolicyOwnerTCPEdge, nil, "ERR_2236", "mapping from phase names"},
		{"too large", `{"on_tcp_connect":[]}` + strings.Repeat(" ", MaxTrafficPolicyBytes), PolicyOwnerTCPEdge, nil, "ERR_2236", "maximum"},
		{"legacy inbound", `{"inbound":[]}`, PolicyOwnerHTTPSRoute, nil, "ERR_2236", `unknown phase "inbound"`},
		{"tcp phase on route", tcpJSON, PolicyOwnerHTTPSRoute, nil, "ERR_2248", "on_tcp_connect is not allowed"},
		{"http phase on tcp edge", routeYAML, PolicyOwnerTCPEdge, nil, "ERR_2248", "on_http_request is not allowed"},
		{"http response phase on tls edge", `{"on_http_response":[]}`, PolicyOwnerTLSEdge, nil, "ERR_2248", "on_http_response"},
		{"phase not a list", `{"on_tcp_connect":{"actions":[]}}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "must be a list of rules"},
		{"rule not a mapping", `{"on_tcp_connect":["deny"]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "on_tcp_connect rule 1 must be a mapping"},
		{"name not a string", `{"on_tcp_connect":[{"name":1,"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "name must be a string"},
		{"unknown rule member", `{"on_tcp_connect":[{"name":"r","expresions":["true"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", `rule 1 ("r") has an unknown member "expresions"`},
		{"expressions not a list", `{"on_tcp_connect":[{"expressions":"true","actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "expressions must be a list"},
		{"expression not a string", `{"on_tcp_connect":[{"expressions":[true],"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "expression 1 must be a string"},
		{"CEL syntax", "on_http_request:\n  - actions: [{type: log}]\n  - name: second\n    expressions: ['true', 'req.']\n    actions: [{type: deny}]\n", PolicyOwnerHTTPSRoute, nil, "ERR_2236", `on_http_request rule 2 ("second"): expression 2 "req." does not compile`},
		{"CEL undeclared", `{"on_http_request":[{"expressions":["request.path == '/'"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerHTTPSRoute, nil, "ERR_2236", "undeclared reference to 'request'"},
		{"res in request phase", `{"on_http_request":[{"expressions":["res.status_code == 200"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerHTTPSRoute, nil, "ERR_2236", "on_http_request rule 1"},
		{"req on tcp", `{"on_tcp_connect":[{"expressions":["req.url.path == '/'"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "undeclared reference to 'req'"},
		{"CEL not bool", `{"on_tcp_connect":[{"expressions":["1 + 1"],"actions":[{"type":"deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "must evaluate to a bool, not int"},
		{"no actions", `{"on_tcp_connect":[{"expressions":["true"]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "at least one action"},
		{"empty actions", `{"on_tcp_connect":[{"actions":[]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "at least one action"},
		{"action without type", `{"on_tcp_connect":[{"actions":[{"config":{}}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "action 1 must be a mapping with a type"},
		{"action not a mapping", `{"on_tcp_connect":[{"actions":["deny"]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", "action 1 must be a mapping with a type"},
		{"unknown action member", `{"on_tcp_connect":[{"actions":[{"type":"deny","conifg":{}}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", `unknown member "conifg"`},
		{"too many rules", rules(MaxTrafficPolicyRules + 1), PolicyOwnerHTTPSRoute, nil, "ERR_7195", "at most"},
		{"unknown action type", `{"on_tcp_connect":[{"actions":[{"type":"teleport"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", `on_tcp_connect rule 1: action 1 has the unknown type "teleport". Supported types are add-headers, close-connection,`},
		{"misspelled action type", "on_http_request:\n  - actions: [{type: log}, {type: custom_response}]\n", PolicyOwnerHTTPSRoute, nil, "ERR_2236", `action 2 has the unknown type "custom_response". Did you mean "custom-response"? Supported types are`},
		{"action type in another case", `{"on_tcp_connect":[{"actions":[{"type":"Deny"}]}]}`, PolicyOwnerTCPEdge, nil, "ERR_2236", `unknown type "Deny". Did you mean "deny"?`},
	} {
		value := tt.value
		got, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Enabled: tt.enabled, Value: &value}, tt.owner)
		var out *api.TrafficPolicyModule
		if tt.code == "" {
			out = &api.TrafficPolicyModule{Enabled: tt.enabled == nil || *tt.enabled, Value: tt.value}
		}
		want(t, tt.name, got, err, tt.code, "value", out)
		if err != nil && !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: message %q does not say %q", tt.name, err, tt.msg)
		}
		if err != nil && len(err.Error()) > 600 {
			t.Errorf("%s: message is %d bytes long", tt.name, len(err.Error()))
		}
	}
	// Every action type of the language is either run, with its configuration checked, or
	// refused as one this server does not run.
	configs := map[string]string{
		"add-headers": `{"headers":{"x-a":"1"}}`, "close-connection": `{}`, "custom-response": `{"status_code":200}`,
		"deny": `{"status_code":401}`, "log": `{"metadata":{"k":"v"}}`, "redirect": `{"to":"https://example.com/"}`,
		"rate-limit":     `{"name":"r","algorithm":"sliding_window","capacity":5,"rate":"60s","bucket_key":["conn.client_ip"]}`,
		"remove-headers": `{"headers":["x-a"]}`, "restrict-ips": `{"allow":["10.0.0.0/8"]}`, "url-rewrite": `{"to":"https://h/x"}`,
	}
	for _, typ := range PolicyActionTypes {
		config, runs := configs[typ]
		phase := "on_http_request"
		if typ == "compress-response" {
			config, runs, phase = `{"algorithms":["gzip"]}`, true, "on_http_response"
		}
		if !runs {
			config = "{}"
		}
		value := fmt.Sprintf(`{%q:[{"actions":[{"type":%q,"config":%s}]}]}`, phase, typ, config)
		_, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &value}, PolicyOwnerHTTPSRoute)
		if runs && err != nil {
			t.Errorf("action type %s: %v", typ, err)
		}
		if !runs && (code(err) != "ERR_2236" || !strings.Contains(err.Error(), fmt.Sprintf("action 1 (%s): this server does not run this action type", typ))) {
			t.Errorf("action type %s, not run here: %v", typ, err)
		}
	}
	if _, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{}, PolicyOwnerTCPEdge); code(err) != "ERR_2236" {
		t.Errorf("null value: %v, want ERR_2236", err)
	}
	if _, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: ptr("{}")}, "https_edge"); err == nil || code(err) != "" {
		t.Errorf("unknown owner: %v, want a programming error", err)
	}
	// A huge expression is clipped in the message.
	long := fmt.Sprintf(`{"on_tcp_connect":[{"expressions":["%s +"],"actions":[{"type":"deny"}]}]}`, strings.Repeat("a", 5000))
	if _, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &long}, PolicyOwnerTCPEdge); code(err) != "ERR_2236" || len(err.Error()) > 600 {
		t.Errorf("long expression: %v", err)
	}
}
