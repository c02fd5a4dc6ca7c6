package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// EventSources are the sources of one event subscription, /event_subscriptions/{id}/sources;
// the path segment of a source is its full type ("ip_policy_created.v0").
type EventSources struct {
	c    *Client
	Path string
}

// EventSources returns the sources of the subscription subscriptionID.
func (c *Client) EventSources(subscriptionID string) *EventSources {
	return &EventSources{c: c, Path: api.EventSubscriptions.Path + "/" + url.PathEscape(subscriptionID) + "/sources"}
}

// Add sends POST <path> {type}.
func (s *EventSources) Add(ctx context.Context, typ string) (*api.EventSource, error) {
	out := new(api.EventSource)
	return out, s.c.do(ctx, http.MethodPost, s.Path, api.EventSourceCreate{Type: &typ}, out)
}

// List sends GET <path>.
func (s *EventSources) List(ctx context.Context) (*api.EventSourceList, error) {
	out := new(api.EventSourceList)
	return out, s.c.do(ctx, http.MethodGet, s.Path, nil, out)
}

// Get sends GET <path>/<type>; a type the subscription lacks is the API's 404 (IsNotFound).
func (s *EventSources) Get(ctx context.Context, typ string) (*api.EventSource, error) {
	out := new(api.EventSource)
	return out, s.c.do(ctx, http.MethodGet, s.Path+"/"+url.PathEscape(typ), nil, out)
}

// Remove sends DELETE <path>/<type>.
func (s *EventSources) Remove(ctx context.Context, typ string) error {
	return s.c.do(ctx, http.MethodDelete, s.Path+"/"+url.PathEscape(typ), nil, nil)
}
