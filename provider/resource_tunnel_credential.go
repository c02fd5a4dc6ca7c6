package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*tunnelCredentialResource)(nil)
	_ resource.ResourceWithImportState = (*tunnelCredentialResource)(nil)
)

// NewTunnelCredentialResource is warren_tunnel_credential, the API's /credentials family.
func NewTunnelCredentialResource() resource.Resource {
	return &tunnelCredentialResource{crud[tunnelCredentialResourceModel, api.Credential]{
		what: "tunnel credential", flatten: flattenTunnelCredentialResource,
	}}
}

type tunnelCredentialResource struct {
	crud[tunnelCredentialResourceModel, api.Credential]
}

// tunnelCredentialModel holds the members every tunnel credential schema shows.
type tunnelCredentialModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	ACL         types.List   `tfsdk:"acl"`
	OwnerID     types.String `tfsdk:"owner_id"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

type tunnelCredentialResourceModel struct {
	tunnelCredentialModel
	Token types.String `tfsdk:"token"`
}

func (r *tunnelCredentialResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tunnel_credential"
}

func (r *tunnelCredentialResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A tunnel credential is an authtoken that agents use to start tunnel sessions. Its ACL limits what they may bind.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("tunnel credential"),
			"description": descriptionAttribute("credential"),
			"metadata":    metadataAttribute(),
			"acl":         aclAttribute(),
			"owner_id":    ownerAttribute(),
			"created_at":  createdAtAttribute(),
			"token":       tokenAttribute("authtoken"),
		},
	}
}

func (r *tunnelCredentialResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *tunnelCredentialResourceModel) (*api.Credential, error) {
		return r.client.Credentials.Create(ctx, api.CredentialCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata),
			ACL: stringsOf(m.ACL), OwnerID: optional(m.OwnerID),
		})
	})
}

func (r *tunnelCredentialResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *tunnelCredentialResourceModel) (*api.Credential, error) {
		plan.Token = prior.Token
		return r.client.Credentials.Update(ctx, prior.ID.ValueString(), api.CredentialUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata),
			ACL: stringsOf(plan.ACL),
		})
	})
}

func flattenTunnelCredential(c *api.Credential, m *tunnelCredentialModel) {
	m.ID = types.StringValue(c.ID)
	m.Description = emptyAsNull(c.Description, m.Description)
	m.Metadata = emptyAsNull(c.Metadata, m.Metadata)
	m.ACL = stringList(c.ACL)
	m.OwnerID = types.StringValue(c.OwnerID)
	m.CreatedAt = types.StringValue(c.CreatedAt)
}

// flattenTunnelCredentialResource keeps the token of the state: only the create answer has one.
func flattenTunnelCredentialResource(c *api.Credential, m *tunnelCredentialResourceModel) {
	flattenTunnelCredential(c, &m.tunnelCredentialModel)
	if c.Token != nil {
		m.Token = types.StringValue(*c.Token)
	}
}

// aclAttribute is the ACL of tunnel and SSH credentials: rules checked at plan time, [] when
// not set (no restrictions), updated in place.
func aclAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: "ACL rules: `*`, or `bind:` followed by a domain (`bind:example.com`, `bind:*.example.com`), an address (`bind:1.tcp.example.com:20000`) or a label (`bind:env=prod`, key and/or value may be `*`). Empty means no restrictions.",
		ElementType:         types.StringType,
		Optional:            true,
		Computed:            true,
		Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{})),
		Validators:          []validator.List{listvalidator.ValueStringsAre(validators.ACLRule())},
	}
}
