package apiserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"go.uber.org/zap/zapcore"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
)

// These tests send events through the real delivery.Sender to local fakes of the targets'
// APIs (apiserver/delivery/deliverytest), which check each request as the service would.

const (
	testKeyID  = "AKIAWARRENTEST"
	serverKey  = "AKIAWARRENSERVER"
	serverSecr = "server-secret-3f2a"
)

// fastRetries makes retries quick, so that tests of them take milliseconds.
func fastRetries(o *apiserver.Options) {
	o.Events.MinBackoff, o.Events.MaxBackoff, o.Events.PollInterval = 5*time.Millisecond, 20*time.Millisecond, 10*time.Millisecond
}

// withAWS points the server's event delivery at the fake.
func withAWS(fake *deliverytest.AWS) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.Events.Sender = delivery.New(delivery.Options{
			Endpoints:       fake.Endpoints(),
			RoleCredentials: credentials.NewStaticCredentialsProvider(serverKey, serverSecr, ""),
		})
	}
}

// subscribe creates a destination with target and a subscription of it to types.
func (c *tc) subscribe(target map[string]any, types ...string) string {
	c.t.Helper()
	dest := str(c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": target})["id"])
	var sources []any
	for _, typ := range types {
		sources = append(sources, map[string]any{"type": typ})
	}
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": sources, "destination_ids": []any{dest}})
	return dest
}

// deliveries lists the admin view of a destination's deliveries, newest first.
func (c *tc) deliveries(destination, state string) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for _, d := range c.as(c.srv.AdminToken).ok(200, "GET", "/_admin/deliveries?destination_id="+destination+"&state="+state, nil)["deliveries"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("payload %q: %v", raw, err)
	}
	return m
}

func TestDeliveryToDataStreamWithKeys(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c := newTC(t, withAWS(fake))
	c.subscribe(map[string]any{"data_stream": map[string]any{"auth": map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}, "stream_arn": streamARN}}, "ip_policy_created.v0")
	policy := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "office"})

	got := decode(t, fake.Kinesis.WaitFor(t, 1)[0])
	equal(t, "delivered event", got, c.events()[0])
	equal(t, "object", got["object"], policy)
	req := fake.RequestsOf("PutRecords")[0]
	equal(t, "signed with the destination's key", req.AccessKeyID, testKeyID)
	equal(t, "region of the ARN", req.Region, "us-east-1")
	equal(t, "partition key", req.PartitionKeys, []string{c.srv.AccountID})
}

func TestDeliveryToLogGroupWithAssumedRole(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(serverKey, serverSecr)
	c := newTC(t, withAWS(fake))
	c.subscribe(map[string]any{"log_group": map[string]any{"auth": map[string]any{"role": map[string]any{"role_arn": roleARN}},
		"log_group_arn": "arn:aws:logs:eu-west-1:123456789012:log-group:audit"}}, "api_key_created.v0")
	key := c.ok(201, "POST", "/api_keys", map[string]any{"description": "ci"})

	got := decode(t, fake.Logs.WaitFor(t, 1)[0])
	equal(t, "event type", got["event_type"], "api_key_created.v0")
	equal(t, "object id", got["object"].(map[string]any)["id"], key["id"])
	roles := fake.AssumedRoles()
	equal(t, "role assumed with the server's key", []string{roles[0].RoleARN, roles[0].SignedBy}, []string{roleARN, serverKey})
	put := fake.RequestsOf("PutLogEvents")[0]
	equal(t, "signed with the role's temporary key", put.AccessKeyID, roles[0].AccessKeyID)
	equal(t, "log stream", []string{put.Stream, put.LogStream}, []string{"audit", delivery.LogStreamName})
}

func TestDeliveryRetriesInOrder(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c := newTC(t, withAWS(fake), fastRetries)
	dest := c.subscribe(map[string]any{"delivery_stream": map[string]any{"auth": map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}},
		"delivery_stream_arn": "arn:aws:firehose:us-east-1:123456789012:deliverystream/audit"}}, "ip_policy_created.v0", "ip_policy_updated.v0")
	fake.Firehose.FailNext(3)
	var want []any
	for i := range 3 {
		p := c.ok(201, "POST", "/ip_policies", map[string]any{"description": "p" + string(rune('0'+i))})
		want = append(want, c.ok(200, "PATCH", "/ip_policies/"+str(p["id"]), map[string]any{"description": "q"}))
	}
	payloads := fake.Firehose.WaitFor(t, 6)
	var got []any
	for i, raw := range payloads {
		ev := decode(t, raw)
		if i%2 == 1 {
			got = append(got, ev["object"])
		}
	}
	equal(t, "each policy's update after its create, in order", got, want)
	apiservertest.WaitUntil(t, "every delivery recorded", func() bool { return len(c.deliveries(dest, "delivered")) == 6 })
	oldest := c.deliveries(dest, "delivered")[5]
	if oldest["attempts"].(float64) < 2 || oldest["last_error"] != "" || oldest["next_attempt_at"] != nil {
		t.Fatalf("the first event's delivery after failures: %v", oldest)
	}
}

func TestDeliveryGivesUpAfterItsAge(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c, logs := observed(t, zapcore.DebugLevel, withAWS(fake), fastRetries, func(o *apiserver.Options) { o.Events.GiveUpAfter = 100 * time.Millisecond })
	dest := c.subscribe(dataStream(map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}), "ip_policy_created.v0")
	fake.Kinesis.SetDown(true)
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	apiservertest.WaitUntil(t, "a failed delivery", func() bool { return len(c.deliveries(dest, "failed")) == 1 })
	failed := c.deliveries(dest, "failed")[0]
	if failed["attempts"].(float64) < 1 || failed["last_error"] == "" || strings.Contains(str(failed["last_error"]), awsSecret) {
		t.Fatalf("failed delivery: %v", failed)
	}
	// The destination goes on with the next event once the target is back.
	fake.Kinesis.SetDown(false)
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	fake.Kinesis.WaitFor(t, 1)
	apiservertest.WaitUntil(t, "the next event delivered", func() bool { return len(c.deliveries(dest, "delivered")) == 1 })
	equal(t, "retries logged", len(logs.FilterMessage("event delivery failed; will retry").AllUntimed()) > 0, true)
	equal(t, "give-up logged", len(logs.FilterMessage("event delivery failed for good").AllUntimed()), 1)
	noSecrets(t, logs, awsSecret)
}

func TestDeliveryToObservability(t *testing.T) {
	fake := deliverytest.NewObservability(t, ddKey)
	c := newTC(t, func(o *apiserver.Options) {
		o.Events.Sender = delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake.URL}})
	})
	c.subscribe(map[string]any{"observability": map[string]any{"api_key": ddKey, "service": "warren", "tags": "env:test", "site": "datadoghq.eu"}}, "tcp_address_created.v0")
	addr := c.ok(201, "POST", "/reserved_addrs", map[string]any{"description": "bastion"})

	got := decode(t, fake.WaitFor(t, 1)[0])
	equal(t, "delivered event", got, c.events()[0])
	equal(t, "object", got["object"], addr)
	item := fake.Items()[0]
	equal(t, "log item", []string{item.DDSource, item.Service, item.DDTags}, []string{"warren", "warren", "env:test"})
}

func TestDeliveryToCloudLogs(t *testing.T) {
	const tenant, client = "72f988bf-86f1-41af-91ab-2d7cd011db47", "0b5a3b8e-3c5e-4f6e-9c1d-2a3b4c5d6e7f"
	fake := deliverytest.NewCloudLogs(t, tenant, client, azSecret)
	c := newTC(t, func(o *apiserver.Options) {
		o.Events.Sender = delivery.New(delivery.Options{Endpoints: delivery.Endpoints{IdentityAuthority: fake.AuthorityHost}, HTTPClient: fake.HTTPClient})
	})
	c.subscribe(map[string]any{"cloud_logs_ingestion": map[string]any{
		"tenant_id": tenant, "client_id": client, "client_secret": azSecret, "logs_ingestion_uri": fake.IngestionURI,
		"data_collection_rule_id": fake.RuleID, "data_collection_stream_name": fake.Stream,
	}}, "certificate_authority_created.v0", "certificate_authority_deleted.v0")
	ca := c.ok(201, "POST", "/certificate_authorities", map[string]any{"ca_pem": newPKI(t).root.pem})
	c.ok(204, "DELETE", "/certificate_authorities/"+str(ca["id"]), nil)

	payloads := fake.WaitFor(t, 2)
	created, deleted := decode(t, payloads[0]), decode(t, payloads[1])
	equal(t, "in order", []any{created["event_type"], deleted["event_type"]}, []any{"certificate_authority_created.v0", "certificate_authority_deleted.v0"})
	equal(t, "object", created["object"], ca)
	if fake.TokenRequests() < 1 {
		t.Fatal("no token was asked of the identity authority")
	}
}

// TestDeliveryWokenOnceCommitted: with no polling to fall back on, the worker is woken by
// the commit of every transaction that writes a delivery: a create, a keyed create (the
// Idempotency-Key's record is written in the same transaction), an agent session's start,
// and the end of its session when its credential is deleted.
func TestDeliveryWokenOnceCommitted(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c := newTC(t, withAWS(fake), func(o *apiserver.Options) { o.Events.PollInterval = time.Hour })
	c.subscribe(map[string]any{"data_stream": map[string]any{"auth": map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}, "stream_arn": streamARN}},
		"ip_policy_created.v0", "agent_session_start.v0", "agent_session_stop.v0")
	delivered := func(n int) string { return str(decode(t, fake.Kinesis.WaitFor(t, n)[n-1])["event_type"]) }

	c.ok(201, "POST", "/ip_policies", map[string]any{})
	equal(t, "a create", delivered(1), "ip_policy_created.v0")
	if r := c.req("POST", "/ip_policies", map[string]any{}, "Idempotency-Key", "woken"); r.status != 201 {
		t.Fatalf("keyed create: %d %s", r.status, r.raw)
	}
	equal(t, "a keyed create", delivered(2), "ip_policy_created.v0")
	id, token := c.credential()
	connect(t, c.srv.URL, token)
	equal(t, "a session's start", delivered(3), "agent_session_start.v0")
	c.ok(204, "DELETE", "/credentials/"+id, nil)
	equal(t, "its end with its credential", delivered(4), "agent_session_stop.v0")
}
