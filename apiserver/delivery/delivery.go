// Package delivery sends events to the five kinds of event destination target through each
// target's real client library: aws-sdk-go-v2 for delivery streams (Firehose), data streams
// (Kinesis) and log groups (CloudWatch Logs), with static keys or an STS AssumeRole; the
// observability vendor's logs intake; and the cloud logs-ingestion API with a client-secret
// token from the cloud's identity library. Every endpoint can be overridden (Endpoints), so
// tests and air-gapped operators point the clients at local services.
package delivery

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Event is one event to deliver: its payload is the JSON of details.md §9.3, sent as is.
type Event struct {
	ID        string    // ev_…
	AccountID string    // ac_…
	Type      string    // e.g. ip_policy_created.v0
	Time      time.Time // event_timestamp
	Payload   []byte    // the whole delivered JSON document
}

// Endpoints override where the clients send their requests; "" keeps the client's default
// (the region's AWS endpoint from the ARN, the observability site's intake, the public
// cloud's identity authority).
type Endpoints struct {
	Firehose       string // delivery_stream
	Kinesis        string // data_stream
	CloudWatchLogs string // log_group
	STS            string // AssumeRole for role auth
	Observability  string // logs intake base URL, instead of the one for the target's site
	// IdentityAuthority is the identity authority host of cloud_logs_ingestion's
	// client-credentials token, instead of the public cloud's.
	IdentityAuthority string
}

// Options configure a Sender.
type Options struct {
	Endpoints Endpoints
	// HTTPClient sends every request; nil means a client with sensible timeouts and a
	// connection pool of its own.
	HTTPClient *http.Client
	// RoleCredentials are the server's own AWS credentials, with which it assumes the
	// role_arn of role auth; nil means the SDK's default chain (environment, shared
	// config, instance role).
	RoleCredentials aws.CredentialsProvider
}

// Sender delivers events; it is safe for concurrent use.
type Sender struct {
	opts      Options
	aws       awsCache            // AWS clients per region and auth (aws.go)
	obs       observabilityClient // observability.go
	cloudLogs cloudLogsPipelines  // cloudlogs.go
}

// New returns a Sender.
func New(opts Options) *Sender {
	if opts.HTTPClient == nil {
		// A transport of its own, not http.DefaultTransport: anything in the process may
		// close that one's idle connections (httptest.Server.Close does), and a call that
		// picked up such a connection fails with "use of closed network connection".
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &Sender{opts: opts}
}

// Send delivers events, in order, to target, whose secrets are filled in. It returns nil only
// when the target accepted every event; the caller retries the whole batch otherwise, so a
// target may see an event more than once (at-least-once delivery). An error wrapped by
// Permanent will fail the same way on every retry.
func (s *Sender) Send(ctx context.Context, target *api.EventTarget, events []Event) error {
	switch {
	case target.DeliveryStream != nil:
		return s.sendDeliveryStream(ctx, target.DeliveryStream, events)
	case target.DataStream != nil:
		return s.sendDataStream(ctx, target.DataStream, events)
	case target.LogGroup != nil:
		return s.sendLogGroup(ctx, target.LogGroup, events)
	case target.Observability != nil:
		return s.sendObservability(ctx, target.Observability, events)
	case target.CloudLogsIngestion != nil:
		return s.sendCloudLogs(ctx, target.CloudLogsIngestion, events)
	}
	return Permanent(errors.New("the target has no kind"))
}

// permanentError is a failure that retrying cannot fix (a malformed ARN, say).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one no retry can fix.
func Permanent(err error) error { return &permanentError{err: err} }

// IsPermanent reports whether err was marked by Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// batchLimits bound one request to a target.
type batchLimits struct {
	maxItems, maxBytes int
	// jsonArray: the items go out as one JSON array, so its brackets and the commas between
	// items count too.
	jsonArray bool
	// sameBatch, when set, may also end a batch before item i (first is the batch's first).
	sameBatch func(first, i int) bool
}

// splitBatches cuts items of the given sizes into consecutive [start, end) ranges within
// limits. A single item over maxBytes still gets a range of its own (the sender refuses it).
func splitBatches(sizes []int, limits batchLimits) [][2]int {
	overhead, sep := 0, 0
	if limits.jsonArray {
		overhead, sep = 2, 1
	}
	var out [][2]int
	start, total := 0, overhead
	for i, n := range sizes {
		add := n
		if i > start {
			add += sep
		}
		if i > start && (i-start >= limits.maxItems || total+add > limits.maxBytes || (limits.sameBatch != nil && !limits.sameBatch(start, i))) {
			out = append(out, [2]int{start, i})
			start, total, add = i, overhead, n
		}
		total += add
	}
	if start < len(sizes) {
		out = append(out, [2]int{start, len(sizes)})
	}
	return out
}
