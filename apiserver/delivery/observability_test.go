package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// testEvents returns n events whose payloads are the §9.3 document with an object of pad
// bytes, so that a test can make big batches.
func testEvents(n, pad int) []delivery.Event {
	evs := make([]delivery.Event, n)
	at := time.Date(2025, 9, 4, 10, 11, 14, 0, time.UTC)
	for i := range evs {
		id := fmt.Sprintf("ev_%027d", i+1)
		payload, _ := json.Marshal(map[string]any{
			"event_id":        id,
			"event_type":      "ip_policy_created.v0",
			"event_timestamp": at.Format(time.RFC3339),
			"account_id":      "ac_2CZyQJXnJvRmUMHa3fAw3o9TQ1F",
			"principal":       nil,
			"object":          map[string]any{"id": fmt.Sprintf("ipp_%027d", i+1), "description": strings.Repeat("x", pad)},
		})
		evs[i] = delivery.Event{ID: id, AccountID: "ac_2CZyQJXnJvRmUMHa3fAw3o9TQ1F", Type: "ip_policy_created.v0", Time: at, Payload: payload}
	}
	return evs
}

// assertPayloads checks that got are the events' payloads, in order.
func assertPayloads(t *testing.T, got []json.RawMessage, evs []delivery.Event) {
	t.Helper()
	if len(got) != len(evs) {
		t.Fatalf("the fake accepted %d payloads, want %d", len(got), len(evs))
	}
	for i, ev := range evs {
		if string(got[i]) != string(ev.Payload) {
			t.Fatalf("payload %d = %.200s, want %.200s", i, got[i], ev.Payload)
		}
	}
}

func observabilityTarget(key string) *api.EventTarget {
	return &api.EventTarget{Observability: &api.EventTargetObservability{
		APIKey: key, Service: "edge-audit", Tags: "env:test,team:net", Site: "datadoghq.eu",
	}}
}

func TestObservabilityDelivers(t *testing.T) {
	fake := deliverytest.NewObservability(t, "dd-key-1")
	s := delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake.URL}})
	evs := testEvents(3, 10)
	if err := s.Send(context.Background(), observabilityTarget("dd-key-1"), evs); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake.Payloads(), evs)
	for i, it := range fake.Items() {
		if it.Service != "edge-audit" || it.DDTags != "env:test,team:net" || it.DDSource != "warren" || it.Hostname != "" {
			t.Errorf("item %d = %+v", i, it)
		}
	}
	if n := fake.Requests(); n != 1 {
		t.Errorf("%d intake requests, want one for three events", n)
	}
}

func TestObservabilityWrongKey(t *testing.T) {
	fake := deliverytest.NewObservability(t, "dd-key-1")
	s := delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake.URL}})
	err := s.Send(context.Background(), observabilityTarget("dd-wrong-key"), testEvents(1, 0))
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("err = %v, want the intake's 403", err)
	}
	if strings.Contains(err.Error(), "dd-wrong-key") {
		t.Errorf("the error shows the key: %v", err)
	}
	if delivery.IsPermanent(err) {
		t.Errorf("a refused key is permanent; a PATCH of the destination may fix it")
	}
	if len(fake.Payloads()) != 0 {
		t.Error("the fake accepted events with a wrong key")
	}
}

func TestObservabilityRetryAfterFailure(t *testing.T) {
	fake := deliverytest.NewObservability(t, "dd-key-1")
	s := delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake.URL}})
	evs := testEvents(2, 0)
	fake.FailNext(1)
	err := s.Send(context.Background(), observabilityTarget("dd-key-1"), evs)
	if err == nil || delivery.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
	if n := fake.Requests(); n != 1 {
		t.Fatalf("%d requests: the client retried by itself", n)
	}
	if err := s.Send(context.Background(), observabilityTarget("dd-key-1"), evs); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake.Payloads(), evs)
}

func TestObservabilitySplitsAtIntakeLimits(t *testing.T) {
	fake := deliverytest.NewObservability(t, "dd-key-1")
	s := delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake.URL}})
	// 2500 small events: three requests of at most 1000 items.
	evs := testEvents(2500, 0)
	if err := s.Send(context.Background(), observabilityTarget("dd-key-1"), evs); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake.Payloads(), evs)
	if n := fake.Requests(); n != 3 {
		t.Errorf("%d requests for 2500 items, want 3", n)
	}
	// 12 events of about 1 MB: at most four fit in 5 MB.
	fake2 := deliverytest.NewObservability(t, "dd-key-1")
	s2 := delivery.New(delivery.Options{Endpoints: delivery.Endpoints{Observability: fake2.URL}})
	big := testEvents(12, 1<<20)
	if err := s2.Send(context.Background(), observabilityTarget("dd-key-1"), big); err != nil {
		t.Fatal(err)
	}
	assertPayloads(t, fake2.Payloads(), big)
	if n := fake2.Requests(); n != 3 {
		t.Errorf("%d requests for 12 MB, want 3", n)
	}
}

func TestObservabilityUnknownSite(t *testing.T) {
	// Without an endpoint override the site picks the intake host; the client knows the list.
	s := delivery.New(delivery.Options{})
	target := observabilityTarget("dd-key-1")
	target.Observability.Site = "example.com"
	err := s.Send(context.Background(), target, testEvents(1, 0))
	if !delivery.IsPermanent(err) || !strings.Contains(err.Error(), "site") {
		t.Fatalf("err = %v, want a permanent error naming the site", err)
	}
}

// roundTripFunc answers requests in-process, for the tests that check where the client
// sends its requests without an endpoint override.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestObservabilitySitePicksTheIntake(t *testing.T) {
	var got []string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.Method+" "+r.URL.String()+" key="+r.Header.Get("DD-API-KEY"))
		return &http.Response{
			StatusCode: http.StatusAccepted, Status: "202 Accepted",
			Header:  http.Header{"Content-Type": {"application/json"}},
			Body:    io.NopCloser(strings.NewReader("{}")),
			Request: r,
		}, nil
	})}
	s := delivery.New(delivery.Options{HTTPClient: client})
	if err := s.Send(context.Background(), observabilityTarget("dd-key-1"), testEvents(1, 0)); err != nil {
		t.Fatal(err)
	}
	want := []string{"POST https://http-intake.logs.datadoghq.eu/api/v2/logs key=dd-key-1"}
	if !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}
