package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The provider's side of every API call: the client from the provider's configuration, one
// debug line before and after each call, and API errors as diagnostics on the attribute they
// name.

// clientFrom returns the provider's client from ProviderData (nil before configuration).
func clientFrom(providerData any, diags *diag.Diagnostics) *client.Client {
	if providerData == nil {
		return nil
	}
	c, ok := providerData.(*client.Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *client.Client, got %T. This is a bug in the provider.", providerData))
	}
	return c
}

// addAPIError reports a failed API call. When the API names the member at fault
// (details.param, e.g. `tls.enabled`) and s (the schema of the plan, state or config at hand;
// nil when there is none) has that attribute, the error is reported on the attribute.
func addAPIError(ctx context.Context, diags *diag.Diagnostics, s schemaTypes, action string, err error) {
	summary := "Could not " + action
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		summary = "Warren API error: could not " + action
		if p, ok := attributePath(ctx, s, apiErr.Body.Details["param"]); ok {
			// err, not apiErr: it also says why retries stopped.
			diags.AddAttributeError(p, summary, err.Error())
			return
		}
	}
	diags.AddError(summary, err.Error())
}

// schemaTypes is what attributePath needs of a schema (tfsdk.Plan.Schema and the like).
type schemaTypes interface {
	TypeAtPath(context.Context, path.Path) (attr.Type, diag.Diagnostics)
}

// attributePath maps an API member path ("tls.enabled", "provider.github.teams",
// "backends.2", "headers[x-a]") onto the schema: the deepest attribute it names, so an index
// or map key lands on its list or map. False when its first member is no attribute.
func attributePath(ctx context.Context, s schemaTypes, param string) (path.Path, bool) {
	if s == nil || param == "" {
		return path.Empty(), false
	}
	p, found := path.Empty(), false
	for _, name := range strings.FieldsFunc(param, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		next := p.AtName(name)
		if _, d := s.TypeAtPath(ctx, next); d.HasError() {
			break
		}
		p, found = next, true
	}
	return p, found
}

// apiCall runs one API call between two debug lines (tflog) that say what is called and
// how long it took: method, family and ID, never a body or a secret, and on failure only
// the HTTP status and error code (a message may quote the input).
func apiCall[T any](ctx context.Context, method, family, id string, call func(context.Context) (T, error)) (T, error) {
	fields := map[string]any{"method": method, "family": family}
	if id != "" {
		fields["id"] = id
	}
	tflog.Debug(ctx, "Warren API call", fields)
	start := time.Now()
	out, err := call(ctx)
	fields["duration_ms"] = time.Since(start).Milliseconds()
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr):
		fields["http_status"] = apiErr.HTTPStatus
		if code := apiErr.Code(); code != "" {
			fields["error_code"] = code
		}
	case err != nil:
		fields["failed"] = true
	}
	tflog.Debug(ctx, "Warren API call done", fields)
	return out, err
}

// apiDelete is apiCall for calls that return nothing but an error.
func apiDelete(ctx context.Context, family, id string, del func(context.Context, string) error) error {
	_, err := apiCall(ctx, "delete", family, id, func(ctx context.Context) (struct{}, error) { return struct{}{}, del(ctx, id) })
	return err
}
