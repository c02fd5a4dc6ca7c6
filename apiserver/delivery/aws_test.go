package delivery_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery/deliverytest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

const (
	staticKey     = "AKIDSTATICEXAMPLE"
	staticSecret  = "static-secret-never-shown"
	serverKey     = "AKIDSERVEREXAMPLE"
	serverSecret  = "server-secret-never-shown"
	roleARN       = "arn:aws:iam::123456789012:role/warren-delivery"
	firehoseARN   = "arn:aws:firehose:eu-west-1:123456789012:deliverystream/audit"
	kinesisARN    = "arn:aws:kinesis:eu-west-1:123456789012:stream/audit"
	logGroupARN   = "arn:aws:logs:eu-west-1:123456789012:log-group:/warren/audit:*"
	logGroupName  = "/warren/audit"
	testAccountID = "ac_2cFvUQaCHBFXAdSwvbGPRpbMWxn"
)

// newAWSFake starts the fake with the destination's static key and the server's own key (the
// one that assumes roles), and a Sender pointed at it.
func newAWSFake(t *testing.T) (*deliverytest.AWS, *delivery.Sender) {
	t.Helper()
	fake := deliverytest.NewAWS(t)
	fake.AddKey(staticKey, staticSecret)
	fake.AddKey(serverKey, serverSecret)
	return fake, delivery.New(delivery.Options{
		Endpoints:       fake.Endpoints(),
		RoleCredentials: credentials.NewStaticCredentialsProvider(serverKey, serverSecret, ""),
	})
}

// readyTarget is the kind's target with static credentials, its log stream (for a log group)
// created by a first send, so that what a test makes the fake do next hits the put itself.
func (k awsKind) readyTarget(t *testing.T, sender *delivery.Sender) *api.EventTarget {
	t.Helper()
	target := k.target(staticAuth(staticSecret))
	if k.name == "log_group" {
		if err := sender.Send(context.Background(), target, events(1)); err != nil {
			t.Fatal(err)
		}
	}
	return target
}

func staticAuth(secret string) *api.AWSAuth {
	return &api.AWSAuth{Creds: &api.AWSCreds{AccessKeyID: staticKey, SecretAccessKey: secret}}
}

func roleAuth() *api.AWSAuth { return &api.AWSAuth{Role: &api.AWSRole{RoleARN: roleARN}} }

type awsKind struct {
	name      string
	operation string
	target    func(*api.AWSAuth) *api.EventTarget
	recorder  func(*deliverytest.AWS) *deliverytest.Recorder
}

var awsKinds = []awsKind{
	{"delivery_stream", "PutRecordBatch",
		func(a *api.AWSAuth) *api.EventTarget {
			return &api.EventTarget{DeliveryStream: &api.EventTargetDeliveryStream{Auth: a, DeliveryStreamARN: firehoseARN}}
		},
		func(f *deliverytest.AWS) *deliverytest.Recorder { return &f.Firehose }},
	{"data_stream", "PutRecords",
		func(a *api.AWSAuth) *api.EventTarget {
			return &api.EventTarget{DataStream: &api.EventTargetDataStream{Auth: a, StreamARN: kinesisARN}}
		},
		func(f *deliverytest.AWS) *deliverytest.Recorder { return &f.Kinesis }},
	{"log_group", "PutLogEvents",
		func(a *api.AWSAuth) *api.EventTarget {
			return &api.EventTarget{LogGroup: &api.EventTargetLogGroup{Auth: a, LogGroupARN: logGroupARN}}
		},
		func(f *deliverytest.AWS) *deliverytest.Recorder { return &f.Logs }},
}

var baseTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// events returns n events one second apart, each a small §9.3 payload.
func events(n int) []delivery.Event {
	out := make([]delivery.Event, n)
	for i := range out {
		id := fmt.Sprintf("ev_%04d", i)
		ts := baseTime.Add(time.Duration(i) * time.Second)
		out[i] = delivery.Event{
			ID: id, AccountID: testAccountID, Type: "ip_policy_created.v0", Time: ts,
			Payload: []byte(fmt.Sprintf(`{"event_id":%q,"event_type":"ip_policy_created.v0","event_timestamp":%q,"account_id":%q}`, id, ts.Format(time.RFC3339), testAccountID)),
		}
	}
	return out
}

func payloadStrings(ps []json.RawMessage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

func wantPayloads(t *testing.T, got []json.RawMessage, evs []delivery.Event) {
	t.Helper()
	want := make([]string, len(evs))
	for i, e := range evs {
		want[i] = string(e.Payload)
	}
	if g := payloadStrings(got); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("payloads:\n got %q\nwant %q", g, want)
	}
}

func TestAWSSendEachKindAndAuth(t *testing.T) {
	for _, kind := range awsKinds {
		for _, authKind := range []string{"creds", "role"} {
			t.Run(kind.name+"/"+authKind, func(t *testing.T) {
				fake, sender := newAWSFake(t)
				auth := staticAuth(staticSecret)
				if authKind == "role" {
					auth = roleAuth()
				}
				evs := events(3)
				if err := sender.Send(context.Background(), kind.target(auth), evs); err != nil {
					t.Fatalf("Send: %v", err)
				}
				wantPayloads(t, kind.recorder(fake).Payloads(), evs)

				puts := fake.RequestsOf(kind.operation)
				if len(puts) != 1 {
					t.Fatalf("%d %s requests, want 1", len(puts), kind.operation)
				}
				put := puts[0]
				if put.Region != "eu-west-1" {
					t.Errorf("signed for region %q, want the ARN's eu-west-1", put.Region)
				}
				wantKey := staticKey
				if authKind == "role" {
					roles := fake.AssumedRoles()
					if len(roles) != 1 {
						t.Fatalf("%d AssumeRole calls, want 1", len(roles))
					}
					want := deliverytest.AssumedRole{RoleARN: roleARN, SessionName: "warren-events", SignedBy: serverKey, AccessKeyID: roles[0].AccessKeyID}
					if roles[0] != want {
						t.Errorf("AssumeRole = %+v, want %+v", roles[0], want)
					}
					wantKey = roles[0].AccessKeyID
				} else if n := len(fake.AssumedRoles()); n != 0 {
					t.Errorf("static credentials assumed %d roles", n)
				}
				if put.AccessKeyID != wantKey {
					t.Errorf("signed with %q, want %q", put.AccessKeyID, wantKey)
				}

				switch kind.name {
				case "delivery_stream":
					if put.Stream != "audit" {
						t.Errorf("delivery stream %q, want audit", put.Stream)
					}
					for i, r := range put.Records {
						if string(r) != string(evs[i].Payload)+"\n" {
							t.Errorf("record %d = %q, want the payload and a newline", i, r)
						}
					}
				case "data_stream":
					if put.Stream != kinesisARN {
						t.Errorf("stream %q, want %q", put.Stream, kinesisARN)
					}
					for i, k := range put.PartitionKeys {
						if k != testAccountID {
							t.Errorf("record %d partition key %q, want the account ID", i, k)
						}
					}
				case "log_group":
					if put.Stream != logGroupName || put.LogStream != delivery.LogStreamName {
						t.Errorf("log group/stream %q/%q, want %q/%q", put.Stream, put.LogStream, logGroupName, delivery.LogStreamName)
					}
					for i, ts := range put.Timestamps {
						if ts != evs[i].Time.UnixMilli() {
							t.Errorf("event %d timestamp %d, want %d", i, ts, evs[i].Time.UnixMilli())
						}
					}
				}

				// A second batch reuses the clients and, for a role, its credentials.
				more := events(5)[3:]
				if err := sender.Send(context.Background(), kind.target(auth), more); err != nil {
					t.Fatalf("second Send: %v", err)
				}
				wantPayloads(t, kind.recorder(fake).Payloads(), append(evs, more...))
				if authKind == "role" {
					if n := len(fake.AssumedRoles()); n != 1 {
						t.Errorf("%d AssumeRole calls after two batches, want 1 (cached)", n)
					}
				}
			})
		}
	}
}

func TestAWSConcurrentSendsShareOneAssumedRole(t *testing.T) {
	fake, sender := newAWSFake(t)
	target := awsKinds[0].target(roleAuth())
	evs := events(8)
	errs := make(chan error, len(evs))
	for _, e := range evs {
		go func() { errs <- sender.Send(context.Background(), target, []delivery.Event{e}) }()
	}
	for range evs {
		if err := <-errs; err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if n := len(fake.Firehose.Payloads()); n != len(evs) {
		t.Errorf("the fake accepted %d events, want %d", n, len(evs))
	}
	if n := len(fake.AssumedRoles()); n != 1 {
		t.Errorf("%d AssumeRole calls, want 1", n)
	}
}

func TestAWSBadSecretIsRefused(t *testing.T) {
	for _, kind := range awsKinds {
		t.Run(kind.name, func(t *testing.T) {
			fake, sender := newAWSFake(t)
			err := sender.Send(context.Background(), kind.target(staticAuth("not-the-secret")), events(2))
			if err == nil {
				t.Fatal("Send with a wrong secret succeeded")
			}
			if !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "not-the-secret") {
				t.Errorf("error %q: want a 403 that does not show the secret", err)
			}
			if delivery.IsPermanent(err) {
				t.Errorf("a refused signature is retried (keys may be fixed by a PATCH): %v", err)
			}
			if n := len(kind.recorder(fake).Payloads()); n != 0 {
				t.Errorf("the fake accepted %d events", n)
			}
		})
	}
}

func TestAWSRoleWithUnknownServerKeyFails(t *testing.T) {
	fake := deliverytest.NewAWS(t)
	sender := delivery.New(delivery.Options{
		Endpoints:       fake.Endpoints(),
		RoleCredentials: credentials.NewStaticCredentialsProvider(serverKey, serverSecret, ""),
	})
	err := sender.Send(context.Background(), awsKinds[0].target(roleAuth()), events(1))
	if err == nil || strings.Contains(err.Error(), serverSecret) {
		t.Fatalf("Send with an unknown server key: %v; want an error without the secret", err)
	}
	if n := len(fake.AssumedRoles()); n != 0 {
		t.Errorf("%d roles assumed", n)
	}
}

func TestAWSFailNextThenSucceeds(t *testing.T) {
	for _, kind := range awsKinds {
		t.Run(kind.name, func(t *testing.T) {
			fake, sender := newAWSFake(t)
			kind.recorder(fake).FailNext(1)
			evs := events(2)
			if err := sender.Send(context.Background(), kind.target(staticAuth(staticSecret)), evs); err == nil || delivery.IsPermanent(err) {
				t.Fatalf("Send to a failing fake: %v, want a retryable error", err)
			}
			if err := sender.Send(context.Background(), kind.target(staticAuth(staticSecret)), evs); err != nil {
				t.Fatalf("retry: %v", err)
			}
			wantPayloads(t, kind.recorder(fake).Payloads(), evs)
		})
	}
}

func TestAWSRoleFailNextOnSTSThenSucceeds(t *testing.T) {
	fake, sender := newAWSFake(t)
	fake.STS.FailNext(1)
	evs := events(1)
	if err := sender.Send(context.Background(), awsKinds[1].target(roleAuth()), evs); err == nil {
		t.Fatal("Send while STS is down succeeded")
	}
	if err := sender.Send(context.Background(), awsKinds[1].target(roleAuth()), evs); err != nil {
		t.Fatalf("retry: %v", err)
	}
	wantPayloads(t, fake.Kinesis.Payloads(), evs)
}

func TestAWSPartialFailureIsAnError(t *testing.T) {
	for _, kind := range awsKinds {
		t.Run(kind.name, func(t *testing.T) {
			fake, sender := newAWSFake(t)
			target := kind.readyTarget(t, sender)
			fake.PartialFailNext(1)
			err := sender.Send(context.Background(), target, events(3))
			if err == nil || delivery.IsPermanent(err) {
				t.Fatalf("Send with a rejected record: %v, want a retryable error", err)
			}
			if !strings.Contains(err.Error(), "rejected") && !strings.Contains(err.Error(), "1 of 3 records failed") {
				t.Errorf("error %q does not say what failed", err)
			}
		})
	}
}

func TestAWSSplitsBatchesAtTheServiceLimits(t *testing.T) {
	tests := []struct {
		kind  awsKind
		count int
		want  []int // records per call
	}{
		{awsKinds[0], 501, []int{500, 1}},
		{awsKinds[1], 501, []int{500, 1}},
		{awsKinds[2], 10001, []int{10000, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.kind.name, func(t *testing.T) {
			fake, sender := newAWSFake(t)
			evs := events(tt.count)
			for i := range evs {
				// Small enough that the count, not the bytes, is the limit.
				evs[i].Payload = []byte(fmt.Sprintf(`{"n":%d}`, i))
			}
			if err := sender.Send(context.Background(), tt.kind.target(staticAuth(staticSecret)), evs); err != nil {
				t.Fatalf("Send: %v", err)
			}
			// A call whose connection dropped under it is sent once more as it was
			// (droppedConnectionRetryer): the fake sees it twice, and it counts once.
			var got []int
			payloads, off := tt.kind.recorder(fake).Payloads(), 0
			reqs := fake.RequestsOf(tt.kind.operation)
			for i, r := range reqs {
				if i > 0 && slices.EqualFunc(r.Records, reqs[i-1].Records, bytes.Equal) {
					t.Logf("call %d was sent again (%d records)", i, len(r.Records))
					payloads = slices.Delete(payloads, off, off+len(r.Records))
					continue
				}
				got = append(got, len(r.Records))
				off += len(r.Records)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("records per call %v, want %v", got, tt.want)
			}
			wantPayloads(t, payloads, evs)
		})
	}
}

func TestAWSSplitsBatchesBySize(t *testing.T) {
	fake, sender := newAWSFake(t)
	// Five events of 900 KiB: four fit the 4 MiB of one call.
	evs := events(5)
	for i := range evs {
		evs[i].Payload = []byte(`"` + strings.Repeat("x", 900<<10) + `"`)
	}
	if err := sender.Send(context.Background(), awsKinds[0].target(staticAuth(staticSecret)), evs); err != nil {
		t.Fatalf("Send: %v", err)
	}
	var got []int
	for _, r := range fake.RequestsOf("PutRecordBatch") {
		got = append(got, len(r.Records))
	}
	if fmt.Sprint(got) != "[4 1]" {
		t.Errorf("records per call %v, want [4 1]", got)
	}
}

func TestAWSLogGroupCreatesItsStreamOnceAndSortsByTime(t *testing.T) {
	fake, sender := newAWSFake(t)
	target := awsKinds[2].target(staticAuth(staticSecret))
	evs := events(3)
	evs[0], evs[2] = evs[2], evs[0] // the newest first
	for range 2 {
		if err := sender.Send(context.Background(), target, evs); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if n := len(fake.RequestsOf("CreateLogStream")); n != 1 {
		t.Errorf("%d CreateLogStream calls, want 1", n)
	}
	puts := fake.RequestsOf("PutLogEvents")
	if len(puts) != 2 {
		t.Fatalf("%d PutLogEvents accepted, want 2", len(puts))
	}
	sorted := []delivery.Event{evs[2], evs[1], evs[0]}
	wantPayloads(t, fake.Logs.Payloads(), append(sorted, sorted...))
}

func TestAWSLogGroupMissingIsARetryableError(t *testing.T) {
	fake, sender := newAWSFake(t)
	fake.RemoveLogGroup(logGroupName)
	err := sender.Send(context.Background(), awsKinds[2].target(staticAuth(staticSecret)), events(1))
	if err == nil || delivery.IsPermanent(err) || !strings.Contains(err.Error(), "log group does not exist") {
		t.Fatalf("Send to a missing log group: %v, want a retryable error naming it", err)
	}
	if n := len(fake.Logs.Payloads()); n != 0 {
		t.Errorf("the fake accepted %d events", n)
	}
}

func TestAWSMalformedARNIsPermanent(t *testing.T) {
	_, sender := newAWSFake(t)
	for _, target := range []*api.EventTarget{
		{DeliveryStream: &api.EventTargetDeliveryStream{Auth: staticAuth(staticSecret), DeliveryStreamARN: "not-an-arn"}},
		{DataStream: &api.EventTargetDataStream{Auth: staticAuth(staticSecret), StreamARN: "arn:aws:kinesis::123456789012:stream/no-region"}},
		{LogGroup: &api.EventTargetLogGroup{Auth: staticAuth(staticSecret), LogGroupARN: "arn:aws:logs:eu-west-1:123456789012:log-stream:x"}},
		{DataStream: &api.EventTargetDataStream{StreamARN: kinesisARN}}, // no auth
	} {
		if err := sender.Send(context.Background(), target, events(1)); !delivery.IsPermanent(err) {
			t.Errorf("Send(%+v) = %v, want a permanent error", target, err)
		}
	}
}

// TestAWSFakeRejectsTamperedSignatures proves the fake's verification is real: a request
// signed by hand is accepted, and the same request with its body, signature or key changed
// is refused.
func TestAWSFakeRejectsTamperedSignatures(t *testing.T) {
	fake, _ := newAWSFake(t)
	body := []byte(`{"DeliveryStreamName":"audit","Records":[{"Data":"e30K"}]}`)
	send := func(t *testing.T, key, secret string, tamper func(*http.Request)) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, fake.URL+"/", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "Firehose_20150804.PutRecordBatch")
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "firehose", "eu-west-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		if tamper != nil {
			tamper(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(t, staticKey, staticSecret, nil); code != http.StatusOK {
		t.Fatalf("a correctly signed request got %d", code)
	}
	tests := map[string]struct {
		key, secret string
		tamper      func(*http.Request)
	}{
		"wrong secret": {staticKey, "guessed", nil},
		"unknown key":  {"AKIDUNKNOWN", staticSecret, nil},
		"body changed": {staticKey, staticSecret, func(r *http.Request) {
			changed := bytes.Replace(body, []byte("audit"), []byte("other"), 1)
			r.Body, r.ContentLength = nopCloser{bytes.NewReader(changed)}, int64(len(changed))
		}},
		"signature changed": {staticKey, staticSecret, func(r *http.Request) {
			a := r.Header.Get("Authorization")
			last := a[len(a)-1:]
			r.Header.Set("Authorization", a[:len(a)-1]+map[bool]string{true: "1", false: "0"}[last == "0"])
		}},
		"signed header changed": {staticKey, staticSecret, func(r *http.Request) {
			r.Header.Set("Content-Type", "application/json")
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if code := send(t, tt.key, tt.secret, tt.tamper); code != http.StatusForbidden {
				t.Errorf("got %d, want 403", code)
			}
		})
	}
	if n := len(fake.Firehose.Payloads()); n != 1 {
		t.Errorf("the fake accepted %d payloads, want only the untampered one", n)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func TestAWSDroppedConnectionIsSentOnceMore(t *testing.T) {
	for _, kind := range awsKinds {
		t.Run(kind.name, func(t *testing.T) {
			fake, sender := newAWSFake(t)
			target := kind.readyTarget(t, sender)
			before := len(fake.RequestsOf(kind.operation))
			fake.ResetNext(1)
			evs := events(2)
			if err := sender.Send(context.Background(), target, evs); err != nil {
				t.Fatalf("Send over a connection reset once: %v", err)
			}
			if n := len(fake.RequestsOf(kind.operation)) - before; n != 1 {
				t.Errorf("%d %s calls accepted after the reset, want 1", n, kind.operation)
			}

			// Twice in a row is the delivery worker's to retry, with its backoff.
			fake.ResetNext(2)
			err := sender.Send(context.Background(), target, evs)
			if err == nil || delivery.IsPermanent(err) || !strings.Contains(err.Error(), "connection reset") {
				t.Fatalf("Send over two resets: %v, want a retryable error naming the reset", err)
			}
		})
	}
}
