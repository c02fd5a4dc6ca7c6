package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

var (
	_ ephemeral.EphemeralResourceWithConfigure = (*apiKeyEphemeral)(nil)
	_ ephemeral.EphemeralResourceWithClose     = (*apiKeyEphemeral)(nil)
)

// NewAPIKeyEphemeralResource is the ephemeral warren_api_key.
func NewAPIKeyEphemeralResource() ephemeral.EphemeralResource { return &apiKeyEphemeral{} }

type apiKeyEphemeral struct {
	client *client.Client
}

type apiKeyEphemeralModel struct {
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	OwnerID     types.String `tfsdk:"owner_id"`
	ID          types.String `tfsdk:"id"`
	Token       types.String `tfsdk:"token"`
}

func (e *apiKeyEphemeral) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (e *apiKeyEphemeral) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An API key that lives for one Terraform run: created when the run opens it and deleted when the run ends. Its token never reaches the plan or the state.",
		Attributes: map[string]schema.Attribute{
			"description": ephemeralInput("What the API key is for."),
			"metadata":    ephemeralInput("Arbitrary user data."),
			"owner_id":    ephemeralInput("ID of the user or service user that owns the key; defaults to the provider key's owner."),
			"id":          ephemeralOutput("ID of the API key.", false),
			"token":       ephemeralOutput("The API key token.", true),
		},
	}
}

func (e *apiKeyEphemeral) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	e.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (e *apiKeyEphemeral) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var m apiKeyEphemeralModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key, err := apiCall(ctx, "create", "API key", "", func(ctx context.Context) (*api.APIKey, error) {
		return e.client.APIKeys.Create(ctx, api.APIKeyCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), OwnerID: optional(m.OwnerID)})
	})
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.Config.Schema, "create API key", err)
		return
	}
	rememberID(ctx, resp, key.ID)
	m.ID, m.Token = types.StringValue(key.ID), types.StringPointerValue(key.Token)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}

func (e *apiKeyEphemeral) Close(ctx context.Context, req ephemeral.CloseRequest, resp *ephemeral.CloseResponse) {
	closeByID(ctx, req, resp, "API key", e.client.APIKeys.Delete)
}
