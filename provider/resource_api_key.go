package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

var (
	_ resource.ResourceWithConfigure   = (*apiKeyResource)(nil)
	_ resource.ResourceWithImportState = (*apiKeyResource)(nil)
)

// NewAPIKeyResource is warren_api_key.
func NewAPIKeyResource() resource.Resource {
	return &apiKeyResource{crud[apiKeyResourceModel, api.APIKey]{
		what: "API key", flatten: flattenAPIKeyResource,
	}}
}

type apiKeyResource struct {
	crud[apiKeyResourceModel, api.APIKey]
}

// apiKeyModel holds the members every API key schema shows (resource, data sources).
type apiKeyModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	OwnerID     types.String `tfsdk:"owner_id"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

type apiKeyResourceModel struct {
	apiKeyModel
	Token types.String `tfsdk:"token"`
}

func (r *apiKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An API key authenticates calls to the Warren API and acts as its owner (a user or a service user).",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("API key"),
			"description": descriptionAttribute("API key"),
			"metadata":    metadataAttribute(),
			"owner_id":    ownerAttribute(),
			"created_at":  createdAtAttribute(),
			"token":       tokenAttribute("API key"),
		},
	}
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *apiKeyResourceModel) (*api.APIKey, error) {
		return r.client.APIKeys.Create(ctx, api.APIKeyCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), OwnerID: optional(m.OwnerID)})
	})
}

func (r *apiKeyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *apiKeyResourceModel) (*api.APIKey, error) {
		plan.Token = prior.Token
		return r.client.APIKeys.Update(ctx, prior.ID.ValueString(), api.APIKeyUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

func flattenAPIKey(k *api.APIKey, m *apiKeyModel) {
	m.ID = types.StringValue(k.ID)
	m.Description = emptyAsNull(k.Description, m.Description)
	m.Metadata = emptyAsNull(k.Metadata, m.Metadata)
	m.OwnerID = types.StringValue(k.OwnerID)
	m.CreatedAt = types.StringValue(k.CreatedAt)
}

// flattenAPIKeyResource keeps the token of the state: only the create answer carries one.
func flattenAPIKeyResource(k *api.APIKey, m *apiKeyResourceModel) {
	flattenAPIKey(k, &m.apiKeyModel)
	if k.Token != nil {
		m.Token = types.StringValue(*k.Token)
	}
}
