package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/DataDog/datadog-api-client-go/v2/api/datadog"
	"github.com/DataDog/datadog-api-client-go/v2/api/datadogV2"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// The observability target is sent through the vendor's Go client (logs intake v2,
// SubmitLog). Each event is one log item whose message is the event's JSON.

const (
	// observabilitySource is every item's ddsource: what sent the logs.
	observabilitySource = "warren"
	// observabilityOperation names SubmitLog in the client's per-operation server table.
	observabilityOperation = "v2.LogsApi.SubmitLog"
	// The intake's limits per request: 1000 items and 5 MB of uncompressed JSON.
	observabilityMaxItems = 1000
	observabilityMaxBytes = 5 << 20
)

// observabilityClient is the Sender's logs client, built on first use (one per Sender: the
// configuration carries the HTTP client and the endpoint override, the key comes per call).
type observabilityClient struct {
	once sync.Once
	api  *datadogV2.LogsApi
}

func (s *Sender) logsAPI() *datadogV2.LogsApi {
	s.obs.once.Do(func() {
		cfg := datadog.NewConfiguration()
		cfg.HTTPClient = s.opts.HTTPClient
		// The worker retries the whole batch with its own backoff.
		cfg.RetryConfiguration.EnableRetry = false
		if base := s.opts.Endpoints.Observability; base != "" {
			// One server without variables: the site no longer picks the host.
			cfg.OperationServers[observabilityOperation] = datadog.ServerConfigurations{{URL: base}}
		}
		s.obs.api = datadogV2.NewLogsApi(datadog.NewAPIClient(cfg))
	})
	return s.obs.api
}

func (s *Sender) sendObservability(ctx context.Context, t *api.EventTargetObservability, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	items := make([]datadogV2.HTTPLogItem, len(events))
	sizes := make([]int, len(events))
	for i, ev := range events {
		item := datadogV2.NewHTTPLogItem(string(ev.Payload))
		item.SetDdsource(observabilitySource)
		if t.Service != "" {
			item.SetService(t.Service)
		}
		if t.Tags != "" {
			item.SetDdtags(t.Tags)
		}
		items[i] = *item
		b, err := json.Marshal(item)
		if err != nil {
			return Permanent(fmt.Errorf("observability: event %s: %w", ev.ID, err))
		}
		if len(b) > observabilityMaxBytes {
			return Permanent(fmt.Errorf("observability: event %s is %d bytes, over the intake's %d per request", ev.ID, len(b), observabilityMaxBytes))
		}
		sizes[i] = len(b)
	}

	ctx = context.WithValue(ctx, datadog.ContextAPIKeys, map[string]datadog.APIKey{
		"apiKeyAuth": {Key: t.APIKey},
	})
	if t.Site != "" {
		ctx = context.WithValue(ctx, datadog.ContextServerVariables, map[string]string{"site": t.Site})
	}
	logs := s.logsAPI()
	gzip := datadogV2.CONTENTENCODING_GZIP
	opts := datadogV2.SubmitLogOptionalParameters{ContentEncoding: &gzip}
	for _, r := range splitBatches(sizes, batchLimits{maxItems: observabilityMaxItems, maxBytes: observabilityMaxBytes, jsonArray: true}) {
		_, resp, err := logs.SubmitLog(ctx, items[r[0]:r[1]], opts)
		if err != nil {
			return observabilityError(resp, err)
		}
	}
	return nil
}

// observabilityError says what failed without the request (its key header) or the body.
func observabilityError(resp *http.Response, err error) error {
	if resp == nil {
		var apiErr datadog.GenericOpenAPIError
		if errors.As(err, &apiErr) {
			// The client refused before sending: an unknown site, say.
			return Permanent(fmt.Errorf("observability: %s", apiErr.Error()))
		}
		return fmt.Errorf("observability: %w", err)
	}
	err = fmt.Errorf("observability: the logs intake answered %s", resp.Status)
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		// The same items are refused again; a rejected key (401/403) may be fixed by a PATCH.
		return Permanent(err)
	}
	return err
}
