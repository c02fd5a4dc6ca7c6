package apiserver_test

import (
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

const (
	roleARN   = "arn:aws:iam::123456789012:role/events"
	streamARN = "arn:aws:kinesis:us-east-1:123456789012:stream/audit"
	awsSecret = "aws-secret-9c1e"
	ddKey     = "dd-key-51b7"
	azSecret  = "az-secret-77d0"
)

func dataStream(auth map[string]any) map[string]any {
	return map[string]any{"data_stream": map[string]any{"auth": auth, "stream_arn": streamARN}}
}

func creds(secret string) map[string]any {
	return map[string]any{"creds": map[string]any{"access_key_id": "AKIAEXAMPLE", "secret_access_key": secret}}
}

func cloudLogs(secret string) map[string]any {
	return map[string]any{"cloud_logs_ingestion": map[string]any{
		"tenant_id": "72f988bf-86f1-41af-91ab-2d7cd011db47", "client_id": "0b5a3b8e-3c5e-4f6e-9c1d-2a3b4c5d6e7f",
		"client_secret": secret, "logs_ingestion_uri": "https://dce.ingest.example.com",
		"data_collection_rule_id": "dcr-00000000000000000000000000000000", "data_collection_stream_name": "Custom-Events",
	}}
}

func TestEventDestinations(t *testing.T) {
	c, logs := observed(t, zapcore.DebugLevel)
	d := c.ok(201, "POST", "/event_destinations", map[string]any{"description": "audit", "format": "json", "target": dataStream(creds(awsSecret))})
	equal(t, "members", keysOf(d), []string{"created_at", "description", "format", "id", "target", "uri"})
	id := str(d["id"])
	equal(t, "prefix", strings.HasPrefix(id, "ed_"), true)
	equal(t, "uri", d["uri"], c.srv.URL+"/event_destinations/"+id)
	equal(t, "format echoed as given", d["format"], "json")
	equal(t, "target redacted", d["target"], map[string]any{"data_stream": map[string]any{
		"auth": map[string]any{"creds": map[string]any{"access_key_id": "AKIAEXAMPLE", "secret_access_key": ""}}, "stream_arn": streamARN}})
	equal(t, "get redacted", c.ok(200, "GET", "/event_destinations/"+id, nil)["target"], d["target"])

	obs := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{"api_key": ddKey, "tags": "env:prod", "service": "warren", "site": "datadoghq.eu"}}})
	equal(t, "observability redacted", obs["target"], map[string]any{"observability": map[string]any{"api_key": "", "tags": "env:prod", "service": "warren", "site": "datadoghq.eu"}})
	az := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": cloudLogs(azSecret)})
	equal(t, "cloud logs redacted", az["target"].(map[string]any)["cloud_logs_ingestion"].(map[string]any)["client_secret"], "")
	role := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"log_group": map[string]any{
		"auth": map[string]any{"role": map[string]any{"role_arn": "arn:aws-cn:iam::1:role/r"}}, "log_group_arn": "arn:aws-cn:logs:cn-north-1:1:log-group:audit"}}})
	equal(t, "role kept", role["target"].(map[string]any)["log_group"].(map[string]any)["auth"], map[string]any{"role": map[string]any{"role_arn": "arn:aws-cn:iam::1:role/r"}})

	// Every rejected create has its code and stores nothing.
	before := len(c.ok(200, "GET", "/event_destinations", nil)["event_destinations"].([]any))
	for _, tt := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"target": dataStream(creds("s"))}, "ERR_235"},
		{map[string]any{"format": "xml", "target": dataStream(creds("s"))}, "ERR_235"},
		{map[string]any{"format": "JSON"}, "ERR_5100"},
		{map[string]any{"format": "JSON", "target": map[string]any{}}, "ERR_5100"},
		{map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{"auth": creds("s"), "stream_arn": streamARN}, "observability": map[string]any{"api_key": "k"}}}, "ERR_5115"},
		{map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{"stream_arn": streamARN}}}, "ERR_5106"},
		{map[string]any{"format": "JSON", "target": dataStream(map[string]any{})}, "ERR_5107"},
		{map[string]any{"format": "JSON", "target": dataStream(map[string]any{"role": map[string]any{"role_arn": roleARN}, "creds": creds("s")["creds"]})}, "ERR_5116"},
		{map[string]any{"format": "JSON", "target": dataStream(map[string]any{"role": map[string]any{"role_arn": "arn:aws:iam::1:user/u"}})}, "ERR_5104"},
		{map[string]any{"format": "JSON", "target": dataStream(creds(""))}, "ERR_240"},
		{map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{"auth": creds("s")}}}, "ERR_236"},
		{map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{"auth": creds("s"), "stream_arn": "stream"}}}, "ERR_5118"},
		{map[string]any{"format": "JSON", "target": map[string]any{"data_stream": map[string]any{"auth": creds("s"), "stream_arn": "arn:aws:firehose:us-east-1:1:deliverystream/d"}}}, "ERR_5119"},
		{map[string]any{"format": "JSON", "target": map[string]any{"delivery_stream": map[string]any{"auth": creds("s"), "delivery_stream_arn": "arn:aws:firehose:us-east-1:1:stream/d"}}}, "ERR_5120"},
		{map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{}}}, "ERR_5133"},
		{map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{"api_key": "k", "site": "example.com"}}}, "ERR_5134"},
		{map[string]any{"format": "JSON", "target": cloudLogs("")}, "ERR_5136"},
		{map[string]any{"format": "JSON", "target": map[string]any{"object_storage": map[string]any{}}}, "ERR_214"},
		{map[string]any{"format": "JSON", "target": dataStream(creds("s")), "description": strings.Repeat("x", 256)}, "ERR_215"},
	} {
		c.fails(400, tt.code, "POST", "/event_destinations", tt.body)
	}
	equal(t, "nothing stored", len(c.ok(200, "GET", "/event_destinations", nil)["event_destinations"].([]any)), before)

	// PATCH: members of the same kind may change, the kind may not; an omitted secret stays.
	c.fails(400, "ERR_5108", "PATCH", "/event_destinations/"+id, map[string]any{"target": map[string]any{"observability": map[string]any{"api_key": "k"}}})
	c.fails(400, "ERR_5115", "PATCH", "/event_destinations/"+id, map[string]any{"target": map[string]any{"data_stream": map[string]any{}, "log_group": map[string]any{}}})
	c.fails(400, "ERR_235", "PATCH", "/event_destinations/"+id, map[string]any{"format": "csv"})
	got := c.ok(200, "PATCH", "/event_destinations/"+id, map[string]any{"format": "JSON", "target": dataStream(creds(""))})
	equal(t, "patched format", got["format"], "JSON")
	equal(t, "description kept", got["description"], "audit")
	got = c.ok(200, "PATCH", "/event_destinations/"+id, map[string]any{"target": dataStream(map[string]any{"role": map[string]any{"role_arn": roleARN}})})
	equal(t, "auth switched to role", got["target"], dataStream(map[string]any{"role": map[string]any{"role_arn": roleARN}}))
	// Back to creds: the old secret was dropped with the creds, so one is required again.
	c.fails(400, "ERR_240", "PATCH", "/event_destinations/"+id, map[string]any{"target": dataStream(creds(""))})
	c.ok(200, "PATCH", "/event_destinations/"+id, map[string]any{"target": dataStream(creds(awsSecret + "-2"))})
	c.ok(200, "PATCH", "/event_destinations/"+str(obs["id"]), map[string]any{"description": "dd"})
	got = c.ok(200, "PATCH", "/event_destinations/"+str(obs["id"]), map[string]any{"target": map[string]any{"observability": map[string]any{"service": "api"}}})
	equal(t, "observability secret kept", got["target"], map[string]any{"observability": map[string]any{"api_key": "", "tags": "", "service": "api", "site": ""}})

	list := c.ok(200, "GET", "/event_destinations?filter="+urlEscape(`obj.description == "audit"`), nil)
	equal(t, "filtered", len(list["event_destinations"].([]any)), 1)
	list = c.ok(200, "GET", "/event_destinations?filter="+urlEscape(`obj.format == "json"`), nil)
	equal(t, "filtered by format", len(list["event_destinations"].([]any)), 0)

	// Another account sees none of it.
	other := c.as(c.srv.NewAccount(t))
	other.fails(404, "", "GET", "/event_destinations/"+id, nil)
	equal(t, "other list", len(other.ok(200, "GET", "/event_destinations", nil)["event_destinations"].([]any)), 0)
	other.fails(404, "", "DELETE", "/event_destinations/"+id, nil)

	c.ok(204, "DELETE", "/event_destinations/"+str(role["id"]), nil)
	c.fails(404, "", "GET", "/event_destinations/"+str(role["id"]), nil)

	// No secret reaches a response (above) or a log line.
	noSecrets(t, logs, awsSecret, ddKey, azSecret)
}

func TestEventSubscriptions(t *testing.T) {
	c := newTC(t)
	ed := str(c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{"api_key": "k"}}})["id"])
	ed2 := str(c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{"api_key": "k"}}})["id"])
	s := c.ok(201, "POST", "/event_subscriptions", map[string]any{"description": "policies", "sources": []any{map[string]any{"type": "ip_policy_created.v0"}}, "destination_ids": []string{ed}})
	equal(t, "members", keysOf(s), []string{"created_at", "description", "destinations", "id", "sources", "uri"})
	id := str(s["id"])
	equal(t, "prefix", strings.HasPrefix(id, "esb_"), true)
	base := c.srv.URL + "/event_subscriptions/" + id
	equal(t, "sources", s["sources"], []any{map[string]any{"type": "ip_policy_created.v0", "uri": base + "/sources/ip_policy_created.v0"}})
	equal(t, "destinations", s["destinations"], []any{map[string]any{"id": ed, "uri": c.srv.URL + "/event_destinations/" + ed}})
	empty := c.ok(201, "POST", "/event_subscriptions", map[string]any{})
	equal(t, "empty lists", []any{empty["sources"], empty["destinations"]}, []any{[]any{}, []any{}})

	before := len(c.ok(200, "GET", "/event_subscriptions", nil)["event_subscriptions"].([]any))
	other := c.as(c.srv.NewAccount(t))
	foreign := str(other.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": map[string]any{"observability": map[string]any{"api_key": "k"}}})["id"])
	for _, tt := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"sources": []any{map[string]any{"type": "edge_created.v0"}}}, "ERR_238"},
		{map[string]any{"sources": []any{map[string]any{}}}, "ERR_238"},
		{map[string]any{"sources": []any{map[string]any{"type": "domain_created.v0"}, map[string]any{"type": "domain_created.v0"}}}, "ERR_5127"},
		{map[string]any{"destination_ids": []string{foreign}}, "ERR_5103"},
		{map[string]any{"destination_ids": []string{"ed_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}}, "ERR_5103"},
		{map[string]any{"destination_ids": []string{"ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}}, "ERR_5103"},
		{map[string]any{"destination_ids": []string{ed, ed}}, "ERR_215"},
		{map[string]any{"sources": []any{map[string]any{"type": "domain_created.v0", "uri": "x"}}}, "ERR_214"},
	} {
		c.fails(400, tt.code, "POST", "/event_subscriptions", tt.body)
	}
	equal(t, "nothing stored", len(c.ok(200, "GET", "/event_subscriptions", nil)["event_subscriptions"].([]any)), before)

	// PATCH: each list replaces the whole list when given, and only then.
	got := c.ok(200, "PATCH", "/event_subscriptions/"+id, map[string]any{"destination_ids": []string{ed2, ed}})
	equal(t, "destinations replaced", len(got["destinations"].([]any)), 2)
	equal(t, "sources kept", len(got["sources"].([]any)), 1)
	got = c.ok(200, "PATCH", "/event_subscriptions/"+id, map[string]any{"sources": []any{map[string]any{"type": "domain_created.v0"}, map[string]any{"type": "domain_deleted.v0"}}})
	equal(t, "sources replaced", got["sources"].([]any)[0].(map[string]any)["type"], "domain_created.v0")
	equal(t, "destinations kept", len(got["destinations"].([]any)), 2)
	c.fails(400, "ERR_5127", "PATCH", "/event_subscriptions/"+id, map[string]any{"sources": []any{map[string]any{"type": "domain_created.v0"}, map[string]any{"type": "domain_created.v0"}}})
	c.fails(400, "ERR_5103", "PATCH", "/event_subscriptions/"+id, map[string]any{"destination_ids": []string{foreign}})
	equal(t, "unchanged", len(c.ok(200, "GET", "/event_subscriptions/"+id, nil)["sources"].([]any)), 2)

	// A destination a subscription names cannot be deleted.
	c.fails(400, "ERR_5112", "DELETE", "/event_destinations/"+ed, nil)
	got = c.ok(200, "PATCH", "/event_subscriptions/"+id, map[string]any{"destination_ids": []string{ed2}, "description": "domains"})
	equal(t, "one destination", len(got["destinations"].([]any)), 1)
	c.ok(204, "DELETE", "/event_destinations/"+ed, nil)

	list := c.ok(200, "GET", "/event_subscriptions?filter="+urlEscape(`obj.description == "domains"`), nil)
	equal(t, "filtered", len(list["event_subscriptions"].([]any)), 1)
	other.fails(404, "", "GET", "/event_subscriptions/"+id, nil)
	other.fails(404, "", "GET", "/event_subscriptions/"+id+"/sources", nil)
	other.fails(404, "", "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "api_key_created.v0"})

	// Sources sub-endpoints, on the subscription's own list.
	src := c.ok(201, "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "api_key_created.v0"})
	equal(t, "source", src, map[string]any{"type": "api_key_created.v0", "uri": base + "/sources/api_key_created.v0"})
	c.fails(400, "ERR_5127", "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "api_key_created.v0"})
	c.fails(400, "ERR_238", "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "api_key_created"})
	equal(t, "the closest type named", c.fails(400, "ERR_238", "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "reserved_domain_created.v0"})["msg"],
		`Invalid event type "reserved_domain_created.v0". Did you mean "domain_created.v0"?`)
	c.fails(400, "ERR_214", "POST", "/event_subscriptions/"+id+"/sources", map[string]any{"type": "api_key_deleted.v0", "filter": "x"})
	all := c.ok(200, "GET", "/event_subscriptions/"+id+"/sources", nil)
	equal(t, "sources list", keysOf(all), []string{"sources", "uri"})
	equal(t, "sources list uri", all["uri"], base+"/sources")
	equal(t, "three sources", len(all["sources"].([]any)), 3)
	equal(t, "subscription agrees", c.ok(200, "GET", "/event_subscriptions/"+id, nil)["sources"], all["sources"])
	equal(t, "get one", c.ok(200, "GET", "/event_subscriptions/"+id+"/sources/api_key_created.v0", nil), src)
	equal(t, "patch nothing", c.ok(200, "PATCH", "/event_subscriptions/"+id+"/sources/api_key_created.v0", map[string]any{}), src)
	c.fails(400, "ERR_214", "PATCH", "/event_subscriptions/"+id+"/sources/api_key_created.v0", map[string]any{"type": "x"})
	c.fails(404, "", "GET", "/event_subscriptions/"+id+"/sources/ip_policy_created.v0", nil)
	c.ok(204, "DELETE", "/event_subscriptions/"+id+"/sources/domain_created.v0", nil)
	c.fails(404, "", "DELETE", "/event_subscriptions/"+id+"/sources/domain_created.v0", nil)
	got = c.ok(200, "GET", "/event_subscriptions/"+id, nil)
	equal(t, "after delete", len(got["sources"].([]any)), 2)
	equal(t, "order kept", got["sources"].([]any)[0].(map[string]any)["type"], "domain_deleted.v0")

	c.ok(204, "DELETE", "/event_subscriptions/"+id, nil)
	c.fails(404, "", "GET", "/event_subscriptions/"+id+"/sources", nil)
	c.ok(204, "DELETE", "/event_destinations/"+ed2, nil)
}
