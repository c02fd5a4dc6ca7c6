package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*sshCredentialResource)(nil)
	_ resource.ResourceWithImportState = (*sshCredentialResource)(nil)
)

// NewSSHCredentialResource is warren_ssh_credential.
func NewSSHCredentialResource() resource.Resource {
	return &sshCredentialResource{crud[sshCredentialModel, api.SSHCredential]{
		what: "SSH credential", flatten: flattenSSHCredential,
	}}
}

type sshCredentialResource struct {
	crud[sshCredentialModel, api.SSHCredential]
}

// sshCredentialModel is the same in the resource and the data sources.
type sshCredentialModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	PublicKey   types.String `tfsdk:"public_key"`
	ACL         types.List   `tfsdk:"acl"`
	OwnerID     types.String `tfsdk:"owner_id"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *sshCredentialResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ssh_credential"
}

func (r *sshCredentialResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An SSH credential is an SSH public key that may start tunnel sessions. A key can be registered once across the whole server.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("SSH credential"),
			"description": descriptionAttribute("SSH credential"),
			"metadata":    metadataAttribute(),
			"public_key": schema.StringAttribute{
				MarkdownDescription: "The public key in authorized_keys form, e.g. `ssh-ed25519 AAAA… comment`; stored as given. Changing it forces a new credential.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{validators.String("must be an SSH public key in authorized_keys form", func(s string) error {
					_, err := rules.SSHPublicKey(s)
					return err
				})},
			},
			"acl":        aclAttribute(),
			"owner_id":   ownerAttribute(),
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *sshCredentialResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *sshCredentialModel) (*api.SSHCredential, error) {
		return r.client.SSHCredentials.Create(ctx, api.SSHCredentialCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata), PublicKey: optional(m.PublicKey),
			ACL: stringsOf(m.ACL), OwnerID: optional(m.OwnerID),
		})
	})
}

func (r *sshCredentialResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *sshCredentialModel) (*api.SSHCredential, error) {
		return r.client.SSHCredentials.Update(ctx, prior.ID.ValueString(), api.SSHCredentialUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata),
			ACL: stringsOf(plan.ACL),
		})
	})
}

func flattenSSHCredential(c *api.SSHCredential, m *sshCredentialModel) {
	m.ID = types.StringValue(c.ID)
	m.Description = emptyAsNull(c.Description, m.Description)
	m.Metadata = emptyAsNull(c.Metadata, m.Metadata)
	m.PublicKey = types.StringValue(c.PublicKey)
	m.ACL = stringList(c.ACL)
	m.OwnerID = types.StringValue(c.OwnerID)
	m.CreatedAt = types.StringValue(c.CreatedAt)
}
