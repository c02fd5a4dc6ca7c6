package apiserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
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

// waitUntil polls cond until it holds; a minute bounds a hung test, it times nothing.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
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
	waitUntil(t, "every delivery recorded", func() bool { return len(c.deliveries(dest, "delivered")) == 6 })
	oldest := c.deliveries(dest, "delivered")[5]
	if oldest["attempts"].(float64) < 2 || oldest["last_error"] != "" || oldest["next_attempt_at"] != nil {
		t.Fatalf("the first event's delivery after failures: %v", oldest)
	}
}

func TestDeliveryGivesUpAfterItsAge(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	fake.AddKey(testKeyID, awsSecret)
	c := newTC(t, withAWS(fake), fastRetries, func(o *apiserver.Options) { o.Events.GiveUpAfter = 100 * time.Millisecond })
	dest := c.subscribe(dataStream(map[string]any{"creds": map[string]any{"access_key_id": testKeyID, "secret_access_key": awsSecret}}), "ip_policy_created.v0")
	fake.Kinesis.SetDown(true)
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	waitUntil(t, "a failed delivery", func() bool { return len(c.deliveries(dest, "failed")) == 1 })
	failed := c.deliveries(dest, "failed")[0]
	if failed["attempts"].(float64) < 1 || failed["last_error"] == "" || strings.Contains(str(failed["last_error"]), awsSecret) {
		t.Fatalf("failed delivery: %v", failed)
	}
	// The destination goes on with the next event once the target is back.
	fake.Kinesis.SetDown(false)
	c.ok(201, "POST", "/ip_policies", map[string]any{})
	fake.Kinesis.WaitFor(t, 1)
	waitUntil(t, "the next event delivered", func() bool { return len(c.deliveries(dest, "delivered")) == 1 })
}
