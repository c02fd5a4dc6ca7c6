package rules

import (
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestTrafficPolicyBasics(t *testing.T) {
	yamlDoc := "on_http_request:\n  - name: block bots\n    expressions:\n      - \"req.headers['user-agent'][0].contains('bot')\"\n    actions:\n      - type: deny\n"
	got, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &yamlDoc}, PolicyOwnerHTTPSRoute)
	want(t, "yaml route", got, err, "", "", &api.TrafficPolicyModule{Enabled: true, Value: yamlDoc})
	jsonDoc := `{"on_tcp_connect":[{"expressions":["conn.client_ip == '1.2.3.4'"],"actions":[{"type":"deny"}]}]}`
	got, err = TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &jsonDoc}, PolicyOwnerTCPEdge)
	want(t, "json tcp", got, err, "", "", &api.TrafficPolicyModule{Enabled: true, Value: jsonDoc})
	_, err = TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &jsonDoc}, PolicyOwnerHTTPSRoute)
	want(t, "tcp phase on route", (*api.TrafficPolicyModule)(nil), err, "ERR_2248", "value", nil)
	bad := "on_http_request: [{expressions: ['req.'], actions: [{type: deny}]}]"
	_, err = TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &bad}, PolicyOwnerHTTPSRoute)
	want(t, "bad CEL", (*api.TrafficPolicyModule)(nil), err, "ERR_2236", "value", nil)
}
