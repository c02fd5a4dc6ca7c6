package provider

import (
	"context"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
)

var (
	_ resource.ResourceWithConfigure      = (*httpResponseBackendResource)(nil)
	_ resource.ResourceWithImportState    = (*httpResponseBackendResource)(nil)
	_ resource.ResourceWithValidateConfig = (*httpResponseBackendResource)(nil)
)

// NewHTTPResponseBackendResource is warren_http_response_backend.
func NewHTTPResponseBackendResource() resource.Resource {
	return &httpResponseBackendResource{crud[httpResponseBackendModel, api.HTTPResponseBackend]{
		what: "HTTP response backend", flatten: flattenHTTPResponseBackend,
	}}
}

type httpResponseBackendResource struct {
	crud[httpResponseBackendModel, api.HTTPResponseBackend]
}

// httpResponseBackendModel is the same in the resource and the data sources.
type httpResponseBackendModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Body        types.String `tfsdk:"body"`
	Headers     types.Map    `tfsdk:"headers"`
	StatusCode  types.Int64  `tfsdk:"status_code"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *httpResponseBackendResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_http_response_backend"
}

func (r *httpResponseBackendResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An HTTP response backend answers every request itself with a fixed status, headers and body.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("HTTP response backend"),
			"description": descriptionAttribute("backend"),
			"metadata":    metadataAttribute(),
			"body": schema.StringAttribute{
				MarkdownDescription: "The response body; at most 64 KiB. Null when not set (an empty body).",
				Optional:            true,
			},
			"headers": schema.MapAttribute{
				MarkdownDescription: "Response headers. Names are case-insensitive (the API shows them lowercased).",
				ElementType:         types.StringType,
				Optional:            true,
				Computed:            true,
				Default:             mapdefault.StaticValue(types.MapValueMust(types.StringType, map[string]attr.Value{})),
				PlanModifiers:       []planmodifier.Map{planmodifiers.EquivalentMap(sameHeaders)},
			},
			"status_code": schema.Int64Attribute{
				MarkdownDescription: "The HTTP status code, 100–599. Defaults to `200`.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(rules.DefaultStatusCode),
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *httpResponseBackendResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m httpResponseBackendModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	known := !m.Body.IsUnknown() && !m.Headers.IsUnknown() && !m.StatusCode.IsUnknown()
	checkRule(&resp.Diagnostics, "Invalid HTTP response", known && !resp.Diagnostics.HasError(), func() error {
		status := int64(rules.DefaultStatusCode)
		if !m.StatusCode.IsNull() {
			status = m.StatusCode.ValueInt64()
		}
		return rules.HTTPResponse(status, m.Body.ValueString(), mapForRule(m.Headers, "known-later", stringOf))
	})
}

func (r *httpResponseBackendResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *httpResponseBackendModel) (*api.HTTPResponseBackend, error) {
		return r.client.HTTPResponseBackends.Create(ctx, expandHTTPResponseBackend(ctx, m))
	})
}

func (r *httpResponseBackendResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *httpResponseBackendModel) (*api.HTTPResponseBackend, error) {
		return r.client.HTTPResponseBackends.Update(ctx, prior.ID.ValueString(), expandHTTPResponseBackend(ctx, plan))
	})
}

func expandHTTPResponseBackend(ctx context.Context, m *httpResponseBackendModel) api.HTTPResponseBackendCreate {
	return api.HTTPResponseBackendCreate{
		Description: clearable(m.Description), Metadata: clearable(m.Metadata), Body: clearable(m.Body),
		Headers: stringMapOf(m.Headers), StatusCode: m.StatusCode.ValueInt64Pointer(),
	}
}

// flattenHTTPResponseBackend keeps the configured header names when the API's lowercased
// ones say the same, so a config with `Content-Type` never shows a diff.
func flattenHTTPResponseBackend(b *api.HTTPResponseBackend, m *httpResponseBackendModel) {
	m.ID = types.StringValue(b.ID)
	m.Description = emptyAsNull(b.Description, m.Description)
	m.Metadata = emptyAsNull(b.Metadata, m.Metadata)
	m.Body = emptyAsNull(b.Body, m.Body)
	headers := b.Headers
	if configured := stringMapOf(m.Headers); configured != nil && sameHeaders(configured, b.Headers) {
		headers = configured
	}
	m.Headers = stringMap(headers)
	m.StatusCode = types.Int64Value(b.StatusCode)
	m.CreatedAt = types.StringValue(b.CreatedAt)
}

// sameHeaders reports whether two header maps are equal but for the case of their names.
func sameHeaders(a, b map[string]string) bool {
	lower := func(m map[string]string) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[strings.ToLower(k)] = v
		}
		return out
	}
	return len(a) == len(b) && maps.Equal(lower(a), lower(b))
}
