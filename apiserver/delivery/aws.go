package delivery

import (
	"context"
	"errors"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Placeholder of the AWS helper's file: replaced whole by the aws-sdk-go-v2 clients.

func (s *Sender) sendDeliveryStream(ctx context.Context, t *api.EventTargetDeliveryStream, events []Event) error {
	return errors.New("delivery_stream: not built")
}

func (s *Sender) sendDataStream(ctx context.Context, t *api.EventTargetDataStream, events []Event) error {
	return errors.New("data_stream: not built")
}

func (s *Sender) sendLogGroup(ctx context.Context, t *api.EventTargetLogGroup, events []Event) error {
	return errors.New("log_group: not built")
}
