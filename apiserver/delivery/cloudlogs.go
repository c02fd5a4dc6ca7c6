package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// The cloud_logs_ingestion target: a client-credentials token from the identity library
// (azidentity) and the Logs Ingestion REST call through an azcore pipeline (the ingestion
// client module is not on the module proxy).

const (
	// cloudLogsScope is the token scope of the Logs Ingestion API (the double slash is the
	// documented form).
	cloudLogsScope      = "https://monitor.azure.com//.default"
	cloudLogsAPIVersion = "2023-01-01"
	// cloudLogsMaxBytes is the API's limit on one call's body.
	cloudLogsMaxBytes = 1 << 20
)

// CloudLogsRecord is one row sent to the data collection rule's stream, one per event: the
// stream must declare these columns (TimeGenerated datetime, EventId, EventType and
// AccountId string, Event dynamic).
type CloudLogsRecord struct {
	TimeGenerated string          `json:"TimeGenerated"` // the event_timestamp, RFC 3339
	EventID       string          `json:"EventId"`
	EventType     string          `json:"EventType"`
	AccountID     string          `json:"AccountId"`
	Event         json.RawMessage `json:"Event"` // the delivered payload of details.md §9.3
}

// cloudLogsPipelines keeps one pipeline (credential and bearer-token policy) per tenant,
// client and secret, so that a token is fetched once and reused until it nears expiry by
// every destination of that client application.
type cloudLogsPipelines struct {
	mu sync.Mutex
	m  map[cloudLogsKey]runtime.Pipeline
}

type cloudLogsKey struct {
	tenant, client string
	secret         [sha256.Size]byte // a hash: the map holds no secret in clear
}

func (s *Sender) cloudLogsPipeline(t *api.EventTargetCloudLogsIngestion) (runtime.Pipeline, error) {
	key := cloudLogsKey{tenant: t.TenantID, client: t.ClientID, secret: sha256.Sum256([]byte(t.ClientSecret))}
	c := &s.cloudLogs
	c.mu.Lock()
	defer c.mu.Unlock()
	if pl, ok := c.m[key]; ok {
		return pl, nil
	}

	opts := azcore.ClientOptions{
		Cloud:     cloud.AzurePublic,
		Transport: s.opts.HTTPClient,
		// The worker retries the whole batch with its own backoff.
		Retry: policy.RetryOptions{MaxRetries: -1},
	}
	credOpts := &azidentity.ClientSecretCredentialOptions{ClientOptions: opts}
	if host := s.opts.Endpoints.IdentityAuthority; host != "" {
		credOpts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: host}
		// Instance discovery asks the public cloud about the authority; a local one is trusted
		// as configured.
		credOpts.DisableInstanceDiscovery = true
	}
	cred, err := azidentity.NewClientSecretCredential(t.TenantID, t.ClientID, t.ClientSecret, credOpts)
	if err != nil {
		// Only malformed input (a tenant id with bad characters, say) fails here.
		return runtime.Pipeline{}, Permanent(fmt.Errorf("cloud_logs_ingestion: %w", err))
	}
	pl := runtime.NewPipeline("warren-delivery", "v0", runtime.PipelineOptions{
		PerRetry: []policy.Policy{runtime.NewBearerTokenPolicy(cred, []string{cloudLogsScope}, nil)},
	}, &opts)
	if c.m == nil {
		c.m = map[cloudLogsKey]runtime.Pipeline{}
	}
	// A new secret of the same client replaces the old one (a rotation), which keeps the
	// map as small as the number of client applications.
	for k := range c.m {
		if k.tenant == key.tenant && k.client == key.client {
			delete(c.m, k)
		}
	}
	c.m[key] = pl
	return pl, nil
}

func (s *Sender) sendCloudLogs(ctx context.Context, t *api.EventTargetCloudLogsIngestion, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	endpoint, err := cloudLogsURL(t)
	if err != nil {
		return Permanent(fmt.Errorf("cloud_logs_ingestion: %w", err))
	}
	records := make([][]byte, len(events))
	sizes := make([]int, len(events))
	for i, ev := range events {
		b, err := json.Marshal(CloudLogsRecord{
			TimeGenerated: ev.Time.UTC().Format(time.RFC3339),
			EventID:       ev.ID,
			EventType:     ev.Type,
			AccountID:     ev.AccountID,
			Event:         json.RawMessage(ev.Payload),
		})
		if err != nil {
			return Permanent(fmt.Errorf("cloud_logs_ingestion: event %s: %w", ev.ID, err))
		}
		if len(b)+2 > cloudLogsMaxBytes {
			return Permanent(fmt.Errorf("cloud_logs_ingestion: event %s is %d bytes, over the API's %d per call", ev.ID, len(b), cloudLogsMaxBytes))
		}
		records[i], sizes[i] = b, len(b)
	}

	pl, err := s.cloudLogsPipeline(t)
	if err != nil {
		return err
	}
	for _, r := range splitBatches(sizes, batchLimits{maxItems: len(events), maxBytes: cloudLogsMaxBytes, jsonArray: true}) {
		body := append([]byte{'['}, bytes.Join(records[r[0]:r[1]], []byte{','})...)
		body = append(body, ']')
		if err := cloudLogsPost(ctx, pl, endpoint, body); err != nil {
			return err
		}
	}
	return nil
}

// cloudLogsURL is the upload call of the rule's stream.
func cloudLogsURL(t *api.EventTargetCloudLogsIngestion) (string, error) {
	u, err := url.Parse(t.LogsIngestionURI)
	if err != nil || u.Host == "" {
		return "", errors.New("logs_ingestion_uri is not an absolute URL")
	}
	if u.Scheme != "https" {
		// The bearer-token policy never sends a token in clear.
		return "", errors.New("logs_ingestion_uri is not an https URL")
	}
	return strings.TrimRight(t.LogsIngestionURI, "/") +
		"/dataCollectionRules/" + url.PathEscape(t.DataCollectionRuleID) +
		"/streams/" + url.PathEscape(t.DataCollectionStreamName) +
		"?api-version=" + cloudLogsAPIVersion, nil
}

func cloudLogsPost(ctx context.Context, pl runtime.Pipeline, endpoint string, body []byte) error {
	req, err := runtime.NewRequest(ctx, http.MethodPost, endpoint)
	if err != nil {
		return Permanent(fmt.Errorf("cloud_logs_ingestion: %w", err))
	}
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), "application/json"); err != nil {
		return fmt.Errorf("cloud_logs_ingestion: %w", err)
	}
	resp, err := pl.Do(req)
	if err != nil {
		return cloudLogsError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return cloudLogsError(runtime.NewResponseError(resp))
}

// cloudLogsError keeps the status and the service's error code: the library's own messages
// span many lines with the whole response.
func cloudLogsError(err error) error {
	var authErr *azidentity.AuthenticationFailedError
	if errors.As(err, &authErr) {
		if authErr.RawResponse != nil {
			return fmt.Errorf("cloud_logs_ingestion: the identity authority refused the client credentials (HTTP %d)", authErr.RawResponse.StatusCode)
		}
		return fmt.Errorf("cloud_logs_ingestion: getting a token: %w", authErr)
	}
	var respErr *azcore.ResponseError
	if errors.As(err, &respErr) {
		err := fmt.Errorf("cloud_logs_ingestion: the logs ingestion API answered HTTP %d %s", respErr.StatusCode, respErr.ErrorCode)
		if respErr.StatusCode == http.StatusBadRequest || respErr.StatusCode == http.StatusRequestEntityTooLarge {
			// The same records are refused again; an authorization or missing-rule error
			// (401/403/404) may be fixed on the cloud side, so those are retried.
			return Permanent(err)
		}
		return err
	}
	return fmt.Errorf("cloud_logs_ingestion: %w", err)
}
