package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ ephemeral.EphemeralResourceWithConfigure = (*tunnelCredentialEphemeral)(nil)
	_ ephemeral.EphemeralResourceWithClose     = (*tunnelCredentialEphemeral)(nil)
)

// NewTunnelCredentialEphemeralResource is the ephemeral warren_tunnel_credential.
func NewTunnelCredentialEphemeralResource() ephemeral.EphemeralResource {
	return &tunnelCredentialEphemeral{}
}

type tunnelCredentialEphemeral struct {
	client *client.Client
}

type tunnelCredentialEphemeralModel struct {
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	ACL         types.List   `tfsdk:"acl"`
	OwnerID     types.String `tfsdk:"owner_id"`
	ID          types.String `tfsdk:"id"`
	Token       types.String `tfsdk:"token"`
}

func (e *tunnelCredentialEphemeral) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tunnel_credential"
}

func (e *tunnelCredentialEphemeral) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A tunnel authtoken that lives for one Terraform run: created when the run opens it and deleted when the run ends. Its token never reaches the plan or the state.",
		Attributes: map[string]schema.Attribute{
			"description": ephemeralInput("What the credential is for."),
			"metadata":    ephemeralInput("Arbitrary user data."),
			"acl": schema.ListAttribute{
				MarkdownDescription: "ACL rules, as for `warren_tunnel_credential`.",
				ElementType:         types.StringType,
				Optional:            true,
				Validators:          []validator.List{listvalidator.ValueStringsAre(validators.ACLRule())},
			},
			"owner_id": ephemeralInput("ID of the user or service user that owns the credential."),
			"id":       ephemeralOutput("ID of the credential.", false),
			"token":    ephemeralOutput("The authtoken.", true),
		},
	}
}

func (e *tunnelCredentialEphemeral) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	e.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (e *tunnelCredentialEphemeral) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var m tunnelCredentialEphemeralModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	in := api.CredentialCreate{
		Description: optional(m.Description), Metadata: optional(m.Metadata),
		ACL: stringsOf(m.ACL), OwnerID: optional(m.OwnerID),
	}
	cred, err := apiCall(ctx, "create", "tunnel credential", "", func(ctx context.Context) (*api.Credential, error) { return e.client.Credentials.Create(ctx, in) })
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.Config.Schema, "create tunnel credential", err)
		return
	}
	rememberID(ctx, resp, cred.ID)
	m.ID, m.Token = types.StringValue(cred.ID), types.StringPointerValue(cred.Token)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}

func (e *tunnelCredentialEphemeral) Close(ctx context.Context, req ephemeral.CloseRequest, resp *ephemeral.CloseResponse) {
	closeByID(ctx, req, resp, "tunnel credential", e.client.Credentials.Delete)
}
