package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	firehosetypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kinesistypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// LogStreamName is the log stream, in a log_group target's group, that receives the events;
// the sender creates it when it is missing.
const LogStreamName = "warren-events"

// AssumeRoleSessionName is the session name of the AssumeRole call of role auth, so that the
// role's owner sees who assumed it in their own audit trail.
const AssumeRoleSessionName = "warren-events"

// The services' documented limits of one call. Firehose and Kinesis share the same record and
// byte limits (Kinesis allows 5 MiB per call; 4 MiB keeps one rule for both).
const (
	streamMaxRecords     = 500
	streamMaxBatchBytes  = 4 << 20
	firehoseMaxRecord    = 1000 << 10
	kinesisMaxRecord     = 1 << 20
	logsMaxEvents        = 10000
	logsMaxBatchBytes    = 1 << 20
	logsEventOverhead    = 26 // bytes CloudWatch Logs counts for each event besides its message
	logsMaxBatchTimeSpan = 24 * time.Hour
	awsClientCacheMax    = 256
)

func (s *Sender) sendDeliveryStream(ctx context.Context, t *api.EventTargetDeliveryStream, events []Event) error {
	a, name, err := parseTargetARN(t.DeliveryStreamARN, "deliverystream/")
	if err != nil {
		return fmt.Errorf("delivery_stream: %w", err)
	}
	c, err := s.awsClients(ctx, a.Region, t.Auth)
	if err != nil {
		return fmt.Errorf("delivery_stream %s: %w", name, err)
	}
	// Newline-delimited JSON: what a delivery stream's object-storage sink can split again.
	records := make([]firehosetypes.Record, len(events))
	sizes := make([]int, len(events))
	for i, e := range events {
		data := append(append(make([]byte, 0, len(e.Payload)+1), e.Payload...), '\n')
		if len(data) > firehoseMaxRecord {
			return Permanent(fmt.Errorf("delivery_stream %s: event %s is %d bytes, over the record limit of %d", name, e.ID, len(data), firehoseMaxRecord))
		}
		records[i] = firehosetypes.Record{Data: data}
		sizes[i] = len(data)
	}
	fh := c.firehose()
	for _, r := range splitBatches(sizes, batchLimits{maxItems: streamMaxRecords, maxBytes: streamMaxBatchBytes}) {
		out, err := fh.PutRecordBatch(ctx, &firehose.PutRecordBatchInput{
			DeliveryStreamName: aws.String(name),
			Records:            records[r[0]:r[1]],
		})
		if err != nil {
			return fmt.Errorf("delivery_stream %s: %w", name, err)
		}
		if n := aws.ToInt32(out.FailedPutCount); n > 0 {
			return fmt.Errorf("delivery_stream %s: %d of %d records failed%s", name, n, r[1]-r[0], firstFirehoseError(out.RequestResponses))
		}
	}
	return nil
}

func firstFirehoseError(entries []firehosetypes.PutRecordBatchResponseEntry) string {
	for _, e := range entries {
		if e.ErrorCode != nil {
			return fmt.Sprintf(" (first: %s: %s)", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
		}
	}
	return ""
}

func (s *Sender) sendDataStream(ctx context.Context, t *api.EventTargetDataStream, events []Event) error {
	a, name, err := parseTargetARN(t.StreamARN, "stream/")
	if err != nil {
		return fmt.Errorf("data_stream: %w", err)
	}
	c, err := s.awsClients(ctx, a.Region, t.Auth)
	if err != nil {
		return fmt.Errorf("data_stream %s: %w", name, err)
	}
	// The account is the partition key: one account's events land on one shard, in order.
	records := make([]kinesistypes.PutRecordsRequestEntry, len(events))
	sizes := make([]int, len(events))
	for i, e := range events {
		size := len(e.Payload) + len(e.AccountID)
		if size > kinesisMaxRecord {
			return Permanent(fmt.Errorf("data_stream %s: event %s is %d bytes, over the record limit of %d", name, e.ID, size, kinesisMaxRecord))
		}
		records[i] = kinesistypes.PutRecordsRequestEntry{Data: e.Payload, PartitionKey: aws.String(e.AccountID)}
		sizes[i] = size
	}
	ks := c.kinesis()
	for _, r := range splitBatches(sizes, batchLimits{maxItems: streamMaxRecords, maxBytes: streamMaxBatchBytes}) {
		out, err := ks.PutRecords(ctx, &kinesis.PutRecordsInput{
			StreamARN: aws.String(t.StreamARN),
			Records:   records[r[0]:r[1]],
		})
		if err != nil {
			return fmt.Errorf("data_stream %s: %w", name, err)
		}
		if n := aws.ToInt32(out.FailedRecordCount); n > 0 {
			return fmt.Errorf("data_stream %s: %d of %d records failed%s", name, n, r[1]-r[0], firstKinesisError(out.Records))
		}
	}
	return nil
}

func firstKinesisError(entries []kinesistypes.PutRecordsResultEntry) string {
	for _, e := range entries {
		if e.ErrorCode != nil {
			return fmt.Sprintf(" (first: %s: %s)", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
		}
	}
	return ""
}

func (s *Sender) sendLogGroup(ctx context.Context, t *api.EventTargetLogGroup, events []Event) error {
	a, name, err := parseTargetARN(t.LogGroupARN, "log-group:")
	if err != nil {
		return fmt.Errorf("log_group: %w", err)
	}
	// The console's copy of a log group ARN ends in ":*" (all its streams).
	name = strings.TrimSuffix(name, ":*")
	c, err := s.awsClients(ctx, a.Region, t.Auth)
	if err != nil {
		return fmt.Errorf("log_group %s: %w", name, err)
	}
	// PutLogEvents wants a batch in time order; the stable sort keeps the outbox order of
	// events of the same millisecond.
	sorted := slices.Clone(events)
	slices.SortStableFunc(sorted, func(x, y Event) int { return x.Time.Compare(y.Time) })
	logEvents := make([]logstypes.InputLogEvent, len(sorted))
	sizes := make([]int, len(sorted))
	for i, e := range sorted {
		size := len(e.Payload) + logsEventOverhead
		if size > logsMaxBatchBytes {
			return Permanent(fmt.Errorf("log_group %s: event %s is %d bytes, over the batch limit of %d", name, e.ID, size, logsMaxBatchBytes))
		}
		logEvents[i] = logstypes.InputLogEvent{Message: aws.String(string(e.Payload)), Timestamp: aws.Int64(e.Time.UnixMilli())}
		sizes[i] = size
	}
	// A batch may not span more than a day.
	sameBatch := func(first, i int) bool { return sorted[i].Time.Sub(sorted[first].Time) < logsMaxBatchTimeSpan }
	logs := c.logs()
	for _, r := range splitBatches(sizes, batchLimits{maxItems: logsMaxEvents, maxBytes: logsMaxBatchBytes, sameBatch: sameBatch}) {
		if err := putLogEvents(ctx, logs, name, logEvents[r[0]:r[1]]); err != nil {
			return fmt.Errorf("log_group %s: %w", name, err)
		}
	}
	return nil
}

// putLogEvents sends one batch to the events' log stream, creating the stream the first time.
func putLogEvents(ctx context.Context, logs *cloudwatchlogs.Client, group string, batch []logstypes.InputLogEvent) error {
	in := &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(LogStreamName), LogEvents: batch}
	out, err := logs.PutLogEvents(ctx, in)
	var notFound *logstypes.ResourceNotFoundException
	if errors.As(err, &notFound) {
		// The stream (or the group: then creating the stream fails the same way) is missing.
		_, cerr := logs.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(LogStreamName)})
		var exists *logstypes.ResourceAlreadyExistsException
		if cerr != nil && !errors.As(cerr, &exists) {
			return cerr
		}
		out, err = logs.PutLogEvents(ctx, in)
	}
	if err != nil {
		return err
	}
	if r := out.RejectedLogEventsInfo; r != nil {
		return fmt.Errorf("%d events sent, some rejected:%s", len(batch), rejected(r))
	}
	return nil
}

// rejected says which events of a batch CloudWatch Logs refused.
func rejected(r *logstypes.RejectedLogEventsInfo) string {
	var b strings.Builder
	if r.TooNewLogEventStartIndex != nil {
		fmt.Fprintf(&b, " too new from index %d;", *r.TooNewLogEventStartIndex)
	}
	if r.TooOldLogEventEndIndex != nil {
		fmt.Fprintf(&b, " too old up to index %d;", *r.TooOldLogEventEndIndex)
	}
	if r.ExpiredLogEventEndIndex != nil {
		fmt.Fprintf(&b, " past the group's retention up to index %d;", *r.ExpiredLogEventEndIndex)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// parseTargetARN returns a target's ARN and the resource name after its type prefix. The
// server checked the shape when the destination was written; one that no longer parses
// cannot be fixed by a retry.
func parseTargetARN(s, resourcePrefix string) (arn.ARN, string, error) {
	a, err := arn.Parse(s)
	if err != nil {
		return arn.ARN{}, "", Permanent(fmt.Errorf("malformed ARN %q: %w", s, err))
	}
	name, ok := strings.CutPrefix(a.Resource, resourcePrefix)
	if !ok || name == "" || a.Region == "" {
		return arn.ARN{}, "", Permanent(fmt.Errorf("the ARN %q does not name a %s in a region", s, strings.TrimRight(resourcePrefix, "/:")))
	}
	return a, name, nil
}

// awsClientSet holds one region's and auth's configuration (with its credentials cache, so
// an assumed role is reused until it nears expiry) and the clients built from it on demand.
type awsClientSet struct {
	cfg       aws.Config
	endpoints Endpoints

	once struct{ firehose, kinesis, logs sync.Once }
	fh   *firehose.Client
	ks   *kinesis.Client
	cwl  *cloudwatchlogs.Client
}

func (c *awsClientSet) firehose() *firehose.Client {
	c.once.firehose.Do(func() {
		c.fh = firehose.NewFromConfig(c.cfg, func(o *firehose.Options) { o.BaseEndpoint = endpoint(c.endpoints.Firehose) })
	})
	return c.fh
}

func (c *awsClientSet) kinesis() *kinesis.Client {
	c.once.kinesis.Do(func() {
		c.ks = kinesis.NewFromConfig(c.cfg, func(o *kinesis.Options) { o.BaseEndpoint = endpoint(c.endpoints.Kinesis) })
	})
	return c.ks
}

func (c *awsClientSet) logs() *cloudwatchlogs.Client {
	c.once.logs.Do(func() {
		c.cwl = cloudwatchlogs.NewFromConfig(c.cfg, func(o *cloudwatchlogs.Options) { o.BaseEndpoint = endpoint(c.endpoints.CloudWatchLogs) })
	})
	return c.cwl
}

// endpoint is an override for a client's BaseEndpoint; nil keeps the region's own.
func endpoint(url string) *string {
	if url == "" {
		return nil
	}
	return aws.String(url)
}

// awsCache is the Sender's clients per region and auth, keyed by a hash so that the key
// never shows a secret.
type awsCache struct {
	mu   sync.Mutex
	sets map[string]*awsClientSet
}

// awsClients returns the clients of region and auth, building them on first use.
func (s *Sender) awsClients(ctx context.Context, region string, auth *api.AWSAuth) (*awsClientSet, error) {
	var id string
	switch {
	case auth != nil && auth.Creds != nil:
		id = "creds\x00" + auth.Creds.AccessKeyID + "\x00" + auth.Creds.SecretAccessKey
	case auth != nil && auth.Role != nil:
		id = "role\x00" + auth.Role.RoleARN
	default:
		return nil, Permanent(errors.New("the target has no auth"))
	}
	sum := sha256.Sum256([]byte(region + "\x00" + id))
	key := hex.EncodeToString(sum[:])

	s.aws.mu.Lock()
	defer s.aws.mu.Unlock()
	if c, ok := s.aws.sets[key]; ok {
		return c, nil
	}
	cfg := aws.Config{
		Region:     region,
		HTTPClient: s.opts.HTTPClient,
		Retryer:    droppedConnectionRetryer,
	}
	if auth.Creds != nil {
		cfg.Credentials = credentials.NewStaticCredentialsProvider(auth.Creds.AccessKeyID, auth.Creds.SecretAccessKey, "")
	} else {
		stsCfg := cfg
		stsCfg.Credentials = s.opts.RoleCredentials
		if stsCfg.Credentials == nil {
			def, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
			if err != nil {
				return nil, fmt.Errorf("loading the server's own AWS credentials: %w", err)
			}
			stsCfg.Credentials = def.Credentials
		}
		stsClient := sts.NewFromConfig(stsCfg, func(o *sts.Options) { o.BaseEndpoint = endpoint(s.opts.Endpoints.STS) })
		cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, auth.Role.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = AssumeRoleSessionName
		}))
	}
	if s.aws.sets == nil || len(s.aws.sets) >= awsClientCacheMax {
		// Edited destinations leave stale entries behind; starting over bounds the map.
		s.aws.sets = map[string]*awsClientSet{}
	}
	c := &awsClientSet{cfg: cfg, endpoints: s.opts.Endpoints}
	s.aws.sets[key] = c
	return c, nil
}

// droppedConnectionRetryer sends a call once more, at once, when the connection it went out on
// was closed or reset under it (aws-sdk-go-v2#2737: a pooled connection can drop between calls).
// Every other failure is the delivery worker's to retry, with its own backoff and give-up age:
// an SDK retry loop inside one attempt would only stretch it.
func droppedConnectionRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 2
		o.RateLimiter = ratelimit.None
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		o.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			msg := err.Error()
			return aws.BoolTernary(strings.Contains(msg, "use of closed network connection") || strings.Contains(msg, "connection reset"))
		})}
	})
}
