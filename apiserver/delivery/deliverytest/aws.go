package deliverytest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
)

// AWS is a fake of the four AWS APIs the delivery targets use, on one server: Firehose
// PutRecordBatch, Kinesis PutRecords, CloudWatch Logs PutLogEvents and CreateLogStream (the
// JSON protocol, dispatched on X-Amz-Target), and STS AssumeRole (the query protocol). It
// verifies the SigV4 signature of every request by signing it again with the secret it knows
// for the access key, and answers 403 on a mismatch or an unknown key. Known keys are those
// of AddKey and the temporary ones its AssumeRole issued (which also need their session token).
//
// Accepted events are recorded by service, one Recorder each (a test that delivers to several
// streams of one service tells them apart by Requests): Firehose records each record's data
// without the newline that ends it, Kinesis each record's data, Logs each event's message.
// FailNext and SetDown on a service's Recorder make that service answer 503.
type AWS struct {
	URL                     string
	Firehose, Kinesis, Logs Recorder
	STS                     Recorder // never records payloads; for FailNext and SetDown

	mu           sync.Mutex
	keys         map[string]awsKey // by access key ID
	requests     []AWSRequest
	assumed      []AssumedRole
	streams      map[string]bool // "group\x00stream" of created log streams
	noGroups     map[string]bool // log groups that do not exist (RemoveLogGroup)
	partialFails int
	resets       int
	seq          int
}

type awsKey struct{ secret, sessionToken string }

// AWSRequest is one request the fake accepted (its signature was valid).
type AWSRequest struct {
	Service     string // signing name: firehose, kinesis, logs, sts
	Operation   string // PutRecordBatch, PutRecords, PutLogEvents, CreateLogStream, AssumeRole
	AccessKeyID string // the key that signed it
	Region      string // of its credential scope
	// Stream is the delivery stream name (Firehose), the stream ARN or name (Kinesis), the
	// log group name (Logs).
	Stream        string
	LogStream     string   // Logs
	PartitionKeys []string // Kinesis, one per record
	Records       [][]byte // record data or log messages, as sent
	Timestamps    []int64  // Logs, one per event
}

// AssumedRole is one AssumeRole the fake granted.
type AssumedRole struct {
	RoleARN, SessionName string
	SignedBy             string // access key ID that signed the AssumeRole call
	AccessKeyID          string // the temporary key it issued
}

// NewAWS starts the fake; it stops when the test ends.
func NewAWS(t testing.TB) *AWS {
	t.Helper()
	f := &AWS{keys: map[string]awsKey{}, streams: map[string]bool{}, noGroups: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Endpoints points every AWS client of a delivery.Sender at the fake.
func (f *AWS) Endpoints() delivery.Endpoints {
	return delivery.Endpoints{Firehose: f.URL, Kinesis: f.URL, CloudWatchLogs: f.URL, STS: f.URL}
}

// AddKey makes a long-term access key known.
func (f *AWS) AddKey(accessKeyID, secretAccessKey string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[accessKeyID] = awsKey{secret: secretAccessKey}
}

// RemoveLogGroup makes a log group missing: every log group exists but those removed.
func (f *AWS) RemoveLogGroup(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noGroups[name] = true
}

// PartialFailNext makes the next n put requests report their first record (or log event) as
// failed, accepting the others, the way the services report a partial failure.
func (f *AWS) PartialFailNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.partialFails = n
}

// ResetNext makes the fake reset the connection of the next n requests after reading them,
// without an answer: what a client sees when a pooled connection drops under its call.
func (f *AWS) ResetNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = n
}

// Requests returns the requests accepted so far, in arrival order.
func (f *AWS) Requests() []AWSRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// RequestsOf returns the accepted requests of one operation.
func (f *AWS) RequestsOf(operation string) []AWSRequest {
	var out []AWSRequest
	for _, r := range f.Requests() {
		if r.Operation == operation {
			out = append(out, r)
		}
	}
	return out
}

// AssumedRoles returns the AssumeRole calls granted so far.
func (f *AWS) AssumedRoles() []AssumedRole {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.assumed)
}

func (f *AWS) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.takeReset() {
		resetConnection(w)
		return
	}
	service, operation, ok := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var rec *Recorder
	switch {
	case service == "Firehose_20150804" && operation == "PutRecordBatch":
		rec, service = &f.Firehose, "firehose"
	case service == "Kinesis_20131202" && operation == "PutRecords":
		rec, service = &f.Kinesis, "kinesis"
	case service == "Logs_20140328" && (operation == "PutLogEvents" || operation == "CreateLogStream"):
		rec, service = &f.Logs, "logs"
	case !ok && r.Method == http.MethodPost && strings.Contains(string(body), "Action=AssumeRole"):
		rec, service, operation = &f.STS, "sts", "AssumeRole"
	default:
		awsJSONError(w, http.StatusBadRequest, "UnknownOperationException", "the fake does not serve "+r.Header.Get("X-Amz-Target"))
		return
	}
	if rec.Refuse() {
		Unavailable(w)
		return
	}
	req := AWSRequest{Service: service, Operation: operation}
	if code, msg := f.verify(r, body, service, &req); code != "" {
		if service == "sts" {
			stsError(w, http.StatusForbidden, code, msg)
		} else {
			awsJSONError(w, http.StatusForbidden, code, msg)
		}
		return
	}
	switch operation {
	case "AssumeRole":
		f.assumeRole(w, body, req)
	case "PutRecordBatch":
		f.putRecordBatch(w, body, req)
	case "PutRecords":
		f.putRecords(w, body, req)
	case "PutLogEvents":
		f.putLogEvents(w, body, req)
	case "CreateLogStream":
		f.createLogStream(w, body, req)
	}
}

// verify signs a copy of r again with the secret of the key named in its Authorization
// header, over the body the fake received, and compares. It returns an error code and
// message when the request is not what a client holding that secret sent.
func (f *AWS) verify(r *http.Request, body []byte, service string, req *AWSRequest) (string, string) {
	const badSig = "The request signature we calculated does not match the signature you provided."
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "MissingAuthenticationToken", "Missing Authentication Token"
	}
	fields := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/") // KEY/DATE/REGION/SERVICE/aws4_request
	if len(scope) != 5 || scope[4] != "aws4_request" || scope[3] != service || scope[2] == "" {
		return "IncompleteSignature", "The credential scope is not KEY/DATE/REGION/" + service + "/aws4_request."
	}
	signedAt, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "IncompleteSignature", "X-Amz-Date is missing or malformed."
	}
	f.mu.Lock()
	key, known := f.keys[scope[0]]
	f.mu.Unlock()
	if !known {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}
	if key.sessionToken != r.Header.Get("X-Amz-Security-Token") {
		return "UnrecognizedClientException", "The security token included in the request is invalid."
	}

	u, err := url.Parse("http://" + r.Host + r.URL.RequestURI())
	if err != nil {
		return "IncompleteSignature", err.Error()
	}
	cp, err := http.NewRequest(r.Method, u.String(), nil)
	if err != nil {
		return "IncompleteSignature", err.Error()
	}
	cp.Host = r.Host
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		switch h {
		case "host", "x-amz-date", "x-amz-security-token":
			// The signer sets these from the request's host and its arguments.
		case "content-length":
			cp.ContentLength = r.ContentLength
		default:
			cp.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: key.secret, SessionToken: key.sessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, cp, hex.EncodeToString(sum[:]), service, scope[2], signedAt); err != nil {
		return "IncompleteSignature", err.Error()
	}
	if cp.Header.Get("Authorization") != auth {
		return "InvalidSignatureException", badSig
	}
	req.AccessKeyID, req.Region = scope[0], scope[2]
	return "", ""
}

func (f *AWS) assumeRole(w http.ResponseWriter, body []byte, req AWSRequest) {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("RoleArn") == "" || form.Get("RoleSessionName") == "" {
		stsError(w, http.StatusBadRequest, "ValidationError", "RoleArn and RoleSessionName are required.")
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("ASIAFAKE%012d", f.seq)
	key := awsKey{secret: fmt.Sprintf("fake-temporary-secret-%d", f.seq), sessionToken: fmt.Sprintf("fake-session-token-%d", f.seq)}
	f.keys[id] = key
	f.assumed = append(f.assumed, AssumedRole{RoleARN: form.Get("RoleArn"), SessionName: form.Get("RoleSessionName"), SignedBy: req.AccessKeyID, AccessKeyID: id})
	f.requests = append(f.requests, req)
	f.mu.Unlock()

	type credentials struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	var resp struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleResponse"`
		Result  struct {
			Credentials     credentials
			AssumedRoleUser struct{ Arn, AssumedRoleId string }
		} `xml:"AssumeRoleResult"`
		RequestID string `xml:"ResponseMetadata>RequestId"`
	}
	resp.Result.Credentials = credentials{id, key.secret, key.sessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	resp.Result.AssumedRoleUser.Arn = form.Get("RoleArn") + "/" + form.Get("RoleSessionName")
	resp.Result.AssumedRoleUser.AssumedRoleId = "AROAFAKE:" + form.Get("RoleSessionName")
	resp.RequestID = fmt.Sprintf("fake-%d", f.seq)
	w.Header().Set("Content-Type", "text/xml")
	_ = xml.NewEncoder(w).Encode(resp)
}

// takeReset reports whether this request's connection must be reset.
func (f *AWS) takeReset() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resets > 0 {
		f.resets--
		return true
	}
	return false
}

// resetConnection closes the request's TCP connection with a reset (linger 0), so the client
// reads "connection reset by peer" rather than a clean end of stream.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err) // httptest serves HTTP/1.1, which always hijacks
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// takePartialFail reports whether this put must fail its first record.
func (f *AWS) takePartialFail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.partialFails > 0 {
		f.partialFails--
		return true
	}
	return false
}

// accept records an accepted request and the payloads it brought.
func (f *AWS) accept(rec *Recorder, req AWSRequest, payloads []json.RawMessage) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if len(payloads) > 0 {
		rec.Accept(payloads...)
	}
}

func (f *AWS) putRecordBatch(w http.ResponseWriter, body []byte, req AWSRequest) {
	var in struct {
		DeliveryStreamName string
		Records            []struct{ Data []byte }
	}
	if err := json.Unmarshal(body, &in); err != nil || in.DeliveryStreamName == "" || len(in.Records) == 0 {
		awsJSONError(w, http.StatusBadRequest, "InvalidArgumentException", "DeliveryStreamName and Records are required.")
		return
	}
	size := 0
	for _, r := range in.Records {
		size += len(r.Data)
	}
	if len(in.Records) > 500 || size > 4<<20 {
		awsJSONError(w, http.StatusBadRequest, "InvalidArgumentException", "A batch holds at most 500 records and 4 MiB.")
		return
	}
	req.Stream = in.DeliveryStreamName
	failFirst := f.takePartialFail()
	type entry struct {
		RecordId     string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	out := struct {
		Encrypted        bool
		FailedPutCount   int
		RequestResponses []entry
	}{}
	var payloads []json.RawMessage
	for i, r := range in.Records {
		if i == 0 && failFirst {
			out.FailedPutCount++
			out.RequestResponses = append(out.RequestResponses, entry{ErrorCode: "ServiceUnavailableException", ErrorMessage: "Slow down."})
			continue
		}
		req.Records = append(req.Records, r.Data)
		payloads = append(payloads, json.RawMessage(bytes.TrimSuffix(r.Data, []byte("\n"))))
		out.RequestResponses = append(out.RequestResponses, entry{RecordId: fmt.Sprintf("record-%d", i)})
	}
	f.accept(&f.Firehose, req, payloads)
	awsJSON(w, out)
}

func (f *AWS) putRecords(w http.ResponseWriter, body []byte, req AWSRequest) {
	var in struct {
		StreamARN, StreamName string
		Records               []struct {
			Data         []byte
			PartitionKey string
		}
	}
	if err := json.Unmarshal(body, &in); err != nil || (in.StreamARN == "" && in.StreamName == "") || len(in.Records) == 0 {
		awsJSONError(w, http.StatusBadRequest, "ValidationException", "A stream and Records are required.")
		return
	}
	size := 0
	for _, r := range in.Records {
		if r.PartitionKey == "" {
			awsJSONError(w, http.StatusBadRequest, "ValidationException", "Every record needs a PartitionKey.")
			return
		}
		size += len(r.Data) + len(r.PartitionKey)
	}
	if len(in.Records) > 500 || size > 5<<20 {
		awsJSONError(w, http.StatusBadRequest, "InvalidArgumentException", "A batch holds at most 500 records and 5 MiB.")
		return
	}
	req.Stream = cmp.Or(in.StreamARN, in.StreamName)
	failFirst := f.takePartialFail()
	type entry struct {
		SequenceNumber, ShardId string `json:",omitempty"`
		ErrorCode               string `json:",omitempty"`
		ErrorMessage            string `json:",omitempty"`
	}
	out := struct {
		FailedRecordCount int
		Records           []entry
	}{}
	var payloads []json.RawMessage
	for i, r := range in.Records {
		if i == 0 && failFirst {
			out.FailedRecordCount++
			out.Records = append(out.Records, entry{ErrorCode: "ProvisionedThroughputExceededException", ErrorMessage: "Rate exceeded for shard."})
			continue
		}
		req.Records = append(req.Records, r.Data)
		req.PartitionKeys = append(req.PartitionKeys, r.PartitionKey)
		payloads = append(payloads, json.RawMessage(r.Data))
		out.Records = append(out.Records, entry{SequenceNumber: fmt.Sprintf("%056d", i), ShardId: "shardId-000000000000"})
	}
	f.accept(&f.Kinesis, req, payloads)
	awsJSON(w, out)
}

// putLogEvents serves any log group; its streams exist once CreateLogStream made them.
func (f *AWS) putLogEvents(w http.ResponseWriter, body []byte, req AWSRequest) {
	var in struct {
		LogGroupName, LogStreamName string
		LogEvents                   []struct {
			Message   string
			Timestamp int64
		}
	}
	if err := json.Unmarshal(body, &in); err != nil || in.LogGroupName == "" || in.LogStreamName == "" || len(in.LogEvents) == 0 {
		awsJSONError(w, http.StatusBadRequest, "InvalidParameterException", "logGroupName, logStreamName and logEvents are required.")
		return
	}
	f.mu.Lock()
	noGroup, exists := f.noGroups[in.LogGroupName], f.streams[in.LogGroupName+"\x00"+in.LogStreamName]
	f.mu.Unlock()
	if noGroup {
		awsJSONError(w, http.StatusBadRequest, "ResourceNotFoundException", "The specified log group does not exist.")
		return
	}
	if !exists {
		awsJSONError(w, http.StatusBadRequest, "ResourceNotFoundException", "The specified log stream does not exist.")
		return
	}
	size := 0
	for i, e := range in.LogEvents {
		size += len(e.Message) + 26
		if i > 0 && e.Timestamp < in.LogEvents[i-1].Timestamp {
			awsJSONError(w, http.StatusBadRequest, "InvalidParameterException", "Log events in a single PutLogEvents request must be in chronological order.")
			return
		}
	}
	if len(in.LogEvents) > 10000 || size > 1<<20 {
		awsJSONError(w, http.StatusBadRequest, "InvalidParameterException", "A batch holds at most 10000 events and 1 MiB.")
		return
	}
	req.Stream, req.LogStream = in.LogGroupName, in.LogStreamName
	out := map[string]any{"nextSequenceToken": fmt.Sprintf("%056d", len(f.Requests()))}
	var payloads []json.RawMessage
	for i, e := range in.LogEvents {
		if i == 0 && f.takePartialFail() {
			out["rejectedLogEventsInfo"] = map[string]int{"tooOldLogEventEndIndex": 0}
			continue
		}
		req.Records = append(req.Records, []byte(e.Message))
		req.Timestamps = append(req.Timestamps, e.Timestamp)
		payloads = append(payloads, json.RawMessage(e.Message))
	}
	f.accept(&f.Logs, req, payloads)
	awsJSON(w, out)
}

func (f *AWS) createLogStream(w http.ResponseWriter, body []byte, req AWSRequest) {
	var in struct{ LogGroupName, LogStreamName string }
	if err := json.Unmarshal(body, &in); err != nil || in.LogGroupName == "" || in.LogStreamName == "" {
		awsJSONError(w, http.StatusBadRequest, "InvalidParameterException", "logGroupName and logStreamName are required.")
		return
	}
	key := in.LogGroupName + "\x00" + in.LogStreamName
	f.mu.Lock()
	noGroup, exists := f.noGroups[in.LogGroupName], f.streams[key]
	if !noGroup {
		f.streams[key] = true
	}
	f.mu.Unlock()
	if noGroup {
		awsJSONError(w, http.StatusBadRequest, "ResourceNotFoundException", "The specified log group does not exist.")
		return
	}
	if exists {
		awsJSONError(w, http.StatusBadRequest, "ResourceAlreadyExistsException", "The specified log stream already exists.")
		return
	}
	req.Stream, req.LogStream = in.LogGroupName, in.LogStreamName
	f.accept(&f.Logs, req, nil)
	awsJSON(w, struct{}{})
}

func awsJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(v)
}

func awsJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

func stsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
		Error   struct{ Type, Code, Message string }
		ReqID   string `xml:"RequestId"`
	}{Error: struct{ Type, Code, Message string }{"Sender", code, msg}, ReqID: "fake"})
}
