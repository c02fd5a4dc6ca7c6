package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// View is a read-only family: objects the server creates itself when agents connect
// (details.md §6.12), which the API only reads.
type View[T any] struct {
	col *Collection[T, struct{}, struct{}]
}

func view[T any](c *Client, f *api.Family) *View[T] {
	return &View[T]{col: collection[T, struct{}, struct{}](c, f)}
}

// Path is the collection path, e.g. "/tunnels".
func (v *View[T]) Path() string { return v.col.Path }

// Get sends GET <path>/<id>; a gone object is the API's 404 (IsNotFound).
func (v *View[T]) Get(ctx context.Context, id string) (*T, error) { return v.col.Get(ctx, id) }

// Pages iterates over the pages of the list, newest first.
func (v *View[T]) Pages(ctx context.Context, opts ListOptions) iter.Seq2[[]T, error] {
	return v.col.Pages(ctx, opts)
}

// All iterates over every object of the list.
func (v *View[T]) All(ctx context.Context, opts ListOptions) iter.Seq2[T, error] {
	return v.col.All(ctx, opts)
}

// List returns every object of the list.
func (v *View[T]) List(ctx context.Context, opts ListOptions) ([]T, error) {
	return v.col.List(ctx, opts)
}

// TunnelSessions is /tunnel_sessions: read-only, plus the commands the server delivers to
// the connected agent.
type TunnelSessions struct {
	*View[api.TunnelSession]
}

// Restart sends POST <path>/<id>/restart: the agent reconnects with a new session ID.
func (s *TunnelSessions) Restart(ctx context.Context, id string) error {
	return s.command(ctx, id, "restart")
}

// Stop sends POST <path>/<id>/stop: the agent exits and the session ends.
func (s *TunnelSessions) Stop(ctx context.Context, id string) error {
	return s.command(ctx, id, "stop")
}

// Update sends POST <path>/<id>/update: the agent updates itself; an agent with no update
// available answers with an error (its code in *Error).
func (s *TunnelSessions) Update(ctx context.Context, id string) error {
	return s.command(ctx, id, "update")
}

// command posts the body {} the commands take (details.md §6.12); like every POST, it is
// not retried after a broken connection, since the agent may already have acted.
func (s *TunnelSessions) command(ctx context.Context, id, name string) error {
	return s.col.c.do(ctx, http.MethodPost, s.Path()+"/"+url.PathEscape(id)+"/"+name, struct{}{}, nil)
}
