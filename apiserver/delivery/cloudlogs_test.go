package delivery_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

const (
	testTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	testClient = "0f8fad5b-d9cb-469f-a165-70867728950e"
	testSecret = "cl1ent~s3cret"
)

func newCloudLogs(t *testing.T) (*deliverytest.CloudLogs, *delivery.Sender) {
	fake := deliverytest.NewCloudLogs(t, testTenant, testClient, testSecret)
	s := delivery.New(delivery.Options{
		Endpoints:  delivery.Endpoints{IdentityAuthority: fake.AuthorityHost},
		HTTPClient: fake.HTTPClient,
	})
	return fake, s
}

func cloudLogsTarget(fake *deliverytest.CloudLogs, secret string) *api.EventTarget {
	return &api.EventTarget{CloudLogsIngestion: &api.EventTargetCloudLogsIngestion{
		TenantID: testTenant, ClientID: testClient, ClientSecret: secret,
		LogsIngestionURI:         fake.IngestionURI,
		DataCollectionRuleID:     fake.RuleID,
		DataCollectionStreamName: fake.Stream,
	}}
}

func TestCloudLogsDelivers(t *testing.T) {
	fake, s := newCloudLogs(t)
	evs := testEvents(3, 10)
	if err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), evs); err != nil {
		t.Fatal(err)
	}
	// The fake took the records only with a bearer token its identity endpoint issued.
	assertPayloads(t, fake.Payloads(), evs)
	for i, rec := range fake.Records() {
		want := map[string]string{
			"TimeGenerated": `"2025-09-04T10:11:14Z"`,
			"EventId":       `"` + evs[i].ID + `"`,
			"EventType":     `"ip_policy_created.v0"`,
			"AccountId":     `"ac_2CZyQJXnJvRmUMHa3fAw3o9TQ1F"`,
		}
		for col, v := range want {
			if string(rec[col]) != v {
				t.Errorf("record %d: %s = %s, want %s", i, col, rec[col], v)
			}
		}
		if len(rec) != 5 {
			t.Errorf("record %d has columns %v, want the five of CloudLogsRecord", i, keys(rec))
		}
	}
	if n := fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests, want 1", n)
	}
}

func TestCloudLogsReusesTheToken(t *testing.T) {
	fake, s := newCloudLogs(t)
	evs := testEvents(2, 0)
	for _, ev := range evs {
		if err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), []delivery.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	assertPayloads(t, fake.Payloads(), evs)
	if n := fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests for two sends, want 1 (the credential is cached)", n)
	}
}

func TestCloudLogsWrongSecret(t *testing.T) {
	fake, s := newCloudLogs(t)
	err := s.Send(context.Background(), cloudLogsTarget(fake, "not-the-secret"), testEvents(1, 0))
	if err == nil || !strings.Contains(err.Error(), "refused the client credentials (HTTP 401)") {
		t.Fatalf("err = %v, want the identity authority's refusal", err)
	}
	if strings.Contains(err.Error(), "not-the-secret") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if len(fake.Payloads()) != 0 {
		t.Error("the fake accepted records without a token")
	}
	// The right secret is another credential: it gets a token and delivers, and keeps it.
	evs := testEvents(2, 0)
	for _, ev := range evs {
		if err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), []delivery.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	assertPayloads(t, fake.Payloads(), evs)
	if n := fake.TokenRequests(); n != 2 {
		t.Errorf("%d token requests, want 2 (the refused one, then one for both sends)", n)
	}
}

func TestCloudLogsWrongStream(t *testing.T) {
	fake, s := newCloudLogs(t)
	target := cloudLogsTarget(fake, testSecret)
	target.CloudLogsIngestion.DataCollectionStreamName = "Custom-Other"
	err := s.Send(context.Background(), target, testEvents(1, 0))
	if err == nil || !strings.Contains(err.Error(), "HTTP 404 NotFound") || delivery.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable 404", err)
	}
}

func TestCloudLogsRefusesAPlainHTTPIngestionURI(t *testing.T) {
	fake, s := newCloudLogs(t)
	target := cloudLogsTarget(fake, testSecret)
	target.CloudLogsIngestion.LogsIngestionURI = strings.Replace(fake.IngestionURI, "https:", "http:", 1)
	err := s.Send(context.Background(), target, testEvents(1, 0))
	if !delivery.IsPermanent(err) || !strings.Contains(err.Error(), "https") {
		t.Fatalf("err = %v, want a permanent error asking for https", err)
	}
	if n := fake.TokenRequests() + fake.Uploads(); n != 0 {
		t.Errorf("%d requests reached the fake", n)
	}
}

func TestCloudLogsRetryAfterFailure(t *testing.T) {
	fake, s := newCloudLogs(t)
	evs := testEvents(2, 0)
	fake.FailNext(1)
	err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), evs)
	if err == nil || !strings.Contains(err.Error(), "HTTP 503") || delivery.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable 503", err)
	}
	if n := fake.Uploads(); n != 1 {
		t.Fatalf("%d ingestion calls: the pipeline retried by itself", n)
	}
	if err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), evs); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake.Payloads(), evs)
}

func TestCloudLogsSplitsAtOneMegabyte(t *testing.T) {
	fake, s := newCloudLogs(t)
	// Five events of 300 kB: three fit in 1 MB, so two calls.
	evs := testEvents(5, 300<<10)
	if err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), evs); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake.Payloads(), evs)
	if n := fake.Uploads(); n != 2 {
		t.Errorf("%d ingestion calls for 1.5 MB, want 2", n)
	}

	// One event over 1 MB can never be sent.
	err := s.Send(context.Background(), cloudLogsTarget(fake, testSecret), testEvents(1, 1<<20))
	if !delivery.IsPermanent(err) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestCloudLogsConcurrentSendsShareOneToken(t *testing.T) {
	fake, s := newCloudLogs(t)
	evs := testEvents(4, 0)
	errs := make(chan error, len(evs))
	for _, ev := range evs {
		go func() {
			errs <- s.Send(context.Background(), cloudLogsTarget(fake, testSecret), []delivery.Event{ev})
		}()
	}
	for range evs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Concurrent sends arrive in any order: compare the sets.
	var got, want []string
	for _, p := range fake.Payloads() {
		got = append(got, string(p))
	}
	for _, ev := range evs {
		want = append(want, string(ev.Payload))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("payloads = %q, want %q", got, want)
	}
	if n := fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests for concurrent sends, want 1", n)
	}
}
