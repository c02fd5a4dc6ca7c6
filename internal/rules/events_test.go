package rules

import (
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestEventFormat(t *testing.T) {
	for in, want := range map[string]string{"JSON": "", "json": "", "Json": "", "": "ERR_235", "xml": "ERR_235"} {
		if got := code(EventFormat(&in)); got != want {
			t.Errorf("EventFormat(%q) = %q, want %q", in, got, want)
		}
	}
	if got := code(EventFormat(nil)); got != "ERR_235" {
		t.Errorf("EventFormat(nil) = %q", got)
	}
}

func TestARN(t *testing.T) {
	for _, tt := range []struct{ arn, service, typ, code string }{
		{"arn:aws:iam::123456789012:role/events", "iam", "role", ""},
		{"arn:aws-cn:iam::123456789012:role/path/events", "iam", "role", ""},
		{"arn:aws-us-gov:firehose:us-gov-west-1:1:deliverystream/s", "firehose", "deliverystream", ""},
		{"arn:aws:kinesis:us-east-1:1:stream/s", "kinesis", "stream", ""},
		{"arn:aws:logs:us-east-1:1:log-group:g", "logs", "log-group", ""},
		{"arn:aws:logs:us-east-1:1:log-group:g:*", "logs", "log-group", ""},
		{"arn:aws:logs:us-east-1:1:log-group/g", "logs", "log-group", "ERR_5120"},
		{"nope", "iam", "role", "ERR_5118"},
		{"arn::iam::1:role/x", "iam", "role", "ERR_5118"},
		{"arn:aws:iam::1:", "iam", "role", "ERR_5118"},
		{"arn:aws:s3:::bucket/x", "iam", "role", "ERR_5119"},
		{"arn:aws:iam::1:user/x", "iam", "role", "ERR_5120"},
		{"arn:aws:iam::1:role/", "iam", "role", "ERR_5120"},
		{"arn:aws:kinesis:us-east-1:1:deliverystream/s", "firehose", "deliverystream", "ERR_5119"},
	} {
		if got := code(ARN("f", tt.arn, tt.service, tt.typ)); got != tt.code {
			t.Errorf("ARN(%q, %s, %s) = %q, want %q", tt.arn, tt.service, tt.typ, got, tt.code)
		}
	}
}

func TestEventTarget(t *testing.T) {
	role := &api.AWSAuth{Role: &api.AWSRole{RoleARN: "arn:aws:iam::1:role/r"}}
	creds := &api.AWSAuth{Creds: &api.AWSCreds{AccessKeyID: "AKIA", SecretAccessKey: "s"}}
	stream := "arn:aws:kinesis:us-east-1:1:stream/s"
	cloud := func(edit func(*api.EventTargetCloudLogsIngestion)) *api.EventTarget {
		c := &api.EventTargetCloudLogsIngestion{
			TenantID: "72f988bf-86f1-41af-91ab-2d7cd011db47", ClientID: "0b5a3b8e-3c5e-4f6e-9c1d-2a3b4c5d6e7f",
			ClientSecret: "s", LogsIngestionURI: "https://dce.ingest.monitor.azure.com",
			DataCollectionRuleID: "dcr-00000000000000000000000000000000", DataCollectionStreamName: "Custom-Events",
		}
		edit(c)
		return &api.EventTarget{CloudLogsIngestion: c}
	}
	same := func(*api.EventTargetCloudLogsIngestion) {}
	for _, tt := range []struct {
		name string
		t    *api.EventTarget
		code string
	}{
		{"missing", nil, "ERR_5100"},
		{"empty", &api.EventTarget{}, "ERR_5100"},
		{"two kinds", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: role, StreamARN: stream}, Observability: &api.EventTargetObservability{APIKey: "k"}}, "ERR_5115"},
		{"data stream role", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: role, StreamARN: stream}}, ""},
		{"data stream creds", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: creds, StreamARN: stream}}, ""},
		{"delivery stream", &api.EventTarget{DeliveryStream: &api.EventTargetDeliveryStream{Auth: role, DeliveryStreamARN: "arn:aws:firehose:eu-west-1:1:deliverystream/d"}}, ""},
		{"log group", &api.EventTarget{LogGroup: &api.EventTargetLogGroup{Auth: creds, LogGroupARN: "arn:aws:logs:eu-west-1:1:log-group:g"}}, ""},
		{"no auth", &api.EventTarget{DataStream: &api.EventTargetDataStream{StreamARN: stream}}, "ERR_5106"},
		{"empty auth", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{}, StreamARN: stream}}, "ERR_5107"},
		{"both auths", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{Role: role.Role, Creds: creds.Creds}, StreamARN: stream}}, "ERR_5116"},
		{"bad role", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{Role: &api.AWSRole{RoleARN: "arn:aws:iam::1:user/u"}}, StreamARN: stream}}, "ERR_5104"},
		{"empty role", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{Role: &api.AWSRole{}}, StreamARN: stream}}, "ERR_5104"},
		{"no key id", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{Creds: &api.AWSCreds{SecretAccessKey: "s"}}, StreamARN: stream}}, "ERR_240"},
		{"no secret", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: &api.AWSAuth{Creds: &api.AWSCreds{AccessKeyID: "a"}}, StreamARN: stream}}, "ERR_240"},
		{"no stream", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: role}}, "ERR_236"},
		{"firehose ARN on a data stream", &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: role, StreamARN: "arn:aws:firehose:eu-west-1:1:deliverystream/d"}}, "ERR_5119"},
		{"observability", &api.EventTarget{Observability: &api.EventTargetObservability{APIKey: "k", Site: "datadoghq.eu"}}, ""},
		{"observability default site", &api.EventTarget{Observability: &api.EventTargetObservability{APIKey: "k"}}, ""},
		{"observability no key", &api.EventTarget{Observability: &api.EventTargetObservability{}}, "ERR_5133"},
		{"observability bad site", &api.EventTarget{Observability: &api.EventTargetObservability{APIKey: "k", Site: "example.com"}}, "ERR_5134"},
		{"cloud logs", cloud(same), ""},
		{"cloud logs no secret", cloud(func(c *api.EventTargetCloudLogsIngestion) { c.ClientSecret = "" }), "ERR_5136"},
		{"cloud logs no stream", cloud(func(c *api.EventTargetCloudLogsIngestion) { c.DataCollectionStreamName = "" }), "ERR_5136"},
		{"cloud logs bad tenant", cloud(func(c *api.EventTargetCloudLogsIngestion) { c.TenantID = "contoso" }), "ERR_5137"},
		{"cloud logs http", cloud(func(c *api.EventTargetCloudLogsIngestion) { c.LogsIngestionURI = "http://dce.example" }), "ERR_5138"},
		{"cloud logs bad rule", cloud(func(c *api.EventTargetCloudLogsIngestion) { c.DataCollectionRuleID = "rule-1" }), "ERR_5139"},
	} {
		if got := code(EventTarget(tt.t)); got != tt.code {
			t.Errorf("%s: EventTarget = %q, want %q", tt.name, got, tt.code)
		}
	}
}

func TestEventSources(t *testing.T) {
	for _, tt := range []struct {
		types []string
		code  string
	}{
		{nil, ""},
		{[]string{"ip_policy_created.v0", "http_request_complete.v0", "event_subscription_deleted.v0", "agent_session_stop.v0"}, ""},
		{[]string{"ip_policy_created"}, "ERR_238"},
		{[]string{"edge_created.v0"}, "ERR_238"},
		{[]string{""}, "ERR_238"},
		{[]string{"ip_policy_created.v0", "ip_policy_created.v0"}, "ERR_5127"},
	} {
		if got := code(EventSources(tt.types)); got != tt.code {
			t.Errorf("EventSources(%q) = %q, want %q", tt.types, got, tt.code)
		}
	}
	for _, tt := range []struct{ typ, msg string }{
		{"reserved_domain_created.v0", `Invalid event type "reserved_domain_created.v0". Did you mean "domain_created.v0"?`},
		{"ip_policy_created", `Invalid event type "ip_policy_created". Did you mean "ip_policy_created.v0"?`},
		{"edge_created.v0", `Invalid event type "edge_created.v0". Did you mean "`}, // a near name, whichever
		{"teleport", `Invalid event type "teleport".`},
	} {
		if err := EventSourceType(tt.typ); code(err) != "ERR_238" || !strings.HasPrefix(err.Error(), tt.msg) {
			t.Errorf("EventSourceType(%q) = %v, want ERR_238 %q", tt.typ, err, tt.msg)
		}
	}
	if err := EventSourceType("teleport"); strings.Contains(err.Error(), "Did you mean") {
		t.Errorf("nothing is near teleport: %v", err)
	}
	if len(EventSourceTypes) != 4+17*3 {
		t.Errorf("%d source types", len(EventSourceTypes))
	}
}
