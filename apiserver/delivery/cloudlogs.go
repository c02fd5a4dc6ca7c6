package delivery

import (
	"context"
	"errors"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Placeholder of the cloud-logs helper's file: replaced whole by the identity and logs
// ingestion clients.

func (s *Sender) sendCloudLogs(ctx context.Context, t *api.EventTargetCloudLogsIngestion, events []Event) error {
	return errors.New("cloud_logs_ingestion: not built")
}
