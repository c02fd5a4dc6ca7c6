package provider

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// TestAPIErrorOnAttribute: details.param becomes an attribute diagnostic when it names an
// attribute of the schema (the deepest one for an index or a map key), else a resource one.
func TestAPIErrorOnAttribute(t *testing.T) {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewStaticBackendResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	var tg resource.SchemaResponse
	NewTunnelGroupBackendResource().Schema(ctx, resource.SchemaRequest{}, &tg)
	apiErr := func(param string) error {
		return &client.Error{HTTPStatus: 400, Body: api.Error{ErrorCode: "ERR_215", Msg: "bad", Details: map[string]string{"param": param}}}
	}
	for _, tc := range []struct {
		schema schemaTypes
		err    error
		want   path.Path // empty: a resource-level error
	}{
		{resp.Schema, apiErr("tls.enabled"), path.Root("tls").AtName("enabled")},
		{resp.Schema, apiErr("address"), path.Root("address")},
		{resp.Schema, apiErr("tls.unknown"), path.Root("tls")},
		{resp.Schema, apiErr("nonsense.enabled"), path.Empty()},
		{resp.Schema, apiErr(""), path.Empty()},
		{tg.Schema, apiErr("labels.env"), path.Root("labels")},
		{tg.Schema, apiErr("labels[env]"), path.Root("labels")},
		{nil, apiErr("address"), path.Empty()},
		{resp.Schema, errors.New("connection refused"), path.Empty()},
	} {
		var diags diag.Diagnostics
		addAPIError(ctx, &diags, tc.schema, "create x", tc.err)
		if len(diags) != 1 || diags[0].Severity() != diag.SeverityError {
			t.Fatalf("%v: got %v", tc.err, diags)
		}
		var got path.Path
		if withPath, ok := diags[0].(diag.DiagnosticWithPath); ok {
			got = withPath.Path()
		}
		if got.String() != tc.want.String() {
			t.Errorf("%v: diagnostic on %q, want %q", tc.err, got, tc.want)
		}
		if diags[0].Detail() != tc.err.Error() {
			t.Errorf("detail %q, want %q", diags[0].Detail(), tc.err.Error())
		}
	}
}
