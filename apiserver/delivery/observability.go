package delivery

import (
	"context"
	"errors"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Placeholder of the observability helper's file: replaced whole by the logs intake client.

func (s *Sender) sendObservability(ctx context.Context, t *api.EventTargetObservability, events []Event) error {
	return errors.New("observability: not built")
}
