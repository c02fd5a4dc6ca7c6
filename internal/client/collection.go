package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Collection is one API family: T is the object, C and U its create and update bodies.
type Collection[T any, C any, U any] struct {
	c      *Client
	Path   string // e.g. "/api_keys"
	Member string // the list envelope's member, e.g. "keys"
}

func collection[T any, C any, U any](c *Client, f *api.Family) *Collection[T, C, U] {
	return &Collection[T, C, U]{c: c, Path: f.Path, Member: f.Member}
}

// Nested is a family whose objects live under a parent object, such as the routes of an
// HTTPS edge.
type Nested[T any, C any, U any] struct {
	c      *Client
	family *api.Family
}

// Under returns the collection under the parent parentID, e.g. /edges/https/<id>/routes.
func (n *Nested[T, C, U]) Under(parentID string) *Collection[T, C, U] {
	return &Collection[T, C, U]{c: n.c, Path: n.family.PathUnder(url.PathEscape(parentID)), Member: n.family.Member}
}

// Create sends POST <path>.
func (col *Collection[T, C, U]) Create(ctx context.Context, in C) (*T, error) {
	out := new(T)
	return out, col.c.do(ctx, http.MethodPost, col.Path, in, out)
}

// Get sends GET <path>/<id>.
func (col *Collection[T, C, U]) Get(ctx context.Context, id string) (*T, error) {
	out := new(T)
	return out, col.c.do(ctx, http.MethodGet, col.Path+"/"+url.PathEscape(id), nil, out)
}

// Update sends PATCH <path>/<id>.
func (col *Collection[T, C, U]) Update(ctx context.Context, id string, in U) (*T, error) {
	out := new(T)
	return out, col.c.do(ctx, http.MethodPatch, col.Path+"/"+url.PathEscape(id), in, out)
}

// Delete sends DELETE <path>/<id>.
func (col *Collection[T, C, U]) Delete(ctx context.Context, id string) error {
	return col.c.do(ctx, http.MethodDelete, col.Path+"/"+url.PathEscape(id), nil, nil)
}

// PutModule sends PUT <path>/<id>/<module> with the module's request form in and decodes
// the module into out (e.g. *api.BackendModule).
func (col *Collection[T, C, U]) PutModule(ctx context.Context, id, module string, in, out any) error {
	return col.c.do(ctx, http.MethodPut, col.modulePath(id, module), in, out)
}

// GetModule sends GET <path>/<id>/<module>; a module that is not configured is the API's 404
// (IsNotFound).
func (col *Collection[T, C, U]) GetModule(ctx context.Context, id, module string, out any) error {
	return col.c.do(ctx, http.MethodGet, col.modulePath(id, module), nil, out)
}

// DeleteModule sends DELETE <path>/<id>/<module>; a module that is not configured is the
// API's 404 (IsNotFound).
func (col *Collection[T, C, U]) DeleteModule(ctx context.Context, id, module string) error {
	return col.c.do(ctx, http.MethodDelete, col.modulePath(id, module), nil, nil)
}

func (col *Collection[T, C, U]) modulePath(id, module string) string {
	return col.Path + "/" + url.PathEscape(id) + "/" + module
}

// ListOptions narrow a list.
type ListOptions struct {
	Filter string // a CEL filter, e.g. `obj.description == "ci"`
	Limit  int    // page size, 1..100; 0 for the server's default
}

// Pages iterates over the pages of a list, newest objects first, following next_page_uri
// (an absolute URL) until it is null.
func (col *Collection[T, C, U]) Pages(ctx context.Context, opts ListOptions) iter.Seq2[[]T, error] {
	return func(yield func([]T, error) bool) {
		q := url.Values{}
		if opts.Filter != "" {
			q.Set("filter", opts.Filter)
		}
		if opts.Limit > 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
		next := col.Path
		if len(q) > 0 {
			next += "?" + q.Encode()
		}
		for next != "" {
			items, nextURI, err := col.page(ctx, next)
			if err == nil && nextURI == next {
				err = fmt.Errorf("warren API: GET %s: next_page_uri points at the same page", next)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(items, nil) {
				return
			}
			next = nextURI
		}
	}
}

// page fetches one page: its items and the next page's URL ("" on the last page).
func (col *Collection[T, C, U]) page(ctx context.Context, uri string) ([]T, string, error) {
	var page map[string]json.RawMessage
	if err := col.c.do(ctx, http.MethodGet, uri, nil, &page); err != nil {
		return nil, "", err
	}
	var items []T
	var next *string
	err := json.Unmarshal(page[col.Member], &items)
	if err == nil && page["next_page_uri"] != nil {
		err = json.Unmarshal(page["next_page_uri"], &next)
	}
	if err != nil {
		return nil, "", fmt.Errorf("warren API: GET %s: decoding the page: %w", uri, err)
	}
	if next == nil {
		return items, "", nil
	}
	return items, *next, nil // absolute: resty leaves absolute URLs alone
}

// All iterates over every object of the list, page after page.
func (col *Collection[T, C, U]) All(ctx context.Context, opts ListOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for items, err := range col.Pages(ctx, opts) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}

// List returns every object of the list.
func (col *Collection[T, C, U]) List(ctx context.Context, opts ListOptions) ([]T, error) {
	out := []T{}
	for item, err := range col.All(ctx, opts) {
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}
