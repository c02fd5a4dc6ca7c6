package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"golang.org/x/crypto/ssh"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure      = (*sshCAResource)(nil)
	_ resource.ResourceWithImportState    = (*sshCAResource)(nil)
	_ resource.ResourceWithValidateConfig = (*sshCAResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*sshCAResource)(nil)
)

// NewSSHCertificateAuthorityResource is warren_ssh_certificate_authority.
func NewSSHCertificateAuthorityResource() resource.Resource {
	return &sshCAResource{crud[sshCAModel, api.SSHCertificateAuthority]{
		what: "SSH certificate authority", flatten: flattenSSHCA,
	}}
}

type sshCAResource struct {
	crud[sshCAModel, api.SSHCertificateAuthority]
}

// sshCAModel is the same in the resource and the data sources.
type sshCAModel struct {
	ID             types.String `tfsdk:"id"`
	Description    types.String `tfsdk:"description"`
	Metadata       types.String `tfsdk:"metadata"`
	PrivateKeyType types.String `tfsdk:"private_key_type"`
	KeySize        types.Int64  `tfsdk:"key_size"`
	EllipticCurve  types.String `tfsdk:"elliptic_curve"`
	PublicKey      types.String `tfsdk:"public_key"`
	KeyType        types.String `tfsdk:"key_type"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (r *sshCAResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ssh_certificate_authority"
}

func (r *sshCAResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// The key choices cannot change: the server generated the key pair from them.
	keep := func() []planmodifier.String {
		return []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An SSH certificate authority. The server generates its key pair, keeps the private key and shows the public key, to trust in `TrustedUserCAKeys` or `@cert-authority` lines.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("SSH certificate authority"),
			"description": descriptionAttribute("certificate authority"),
			"metadata":    metadataAttribute(),
			"private_key_type": schema.StringAttribute{
				MarkdownDescription: "Type of the key pair: `rsa`, `ecdsa` or `ed25519` (default). Changing it forces a new certificate authority.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(rules.DefaultSSHKeyType),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.OneOf(rules.SSHKeyTypes...)},
			},
			"key_size": schema.Int64Attribute{
				MarkdownDescription: "RSA key size, `2048` or `4096` (default); only with `private_key_type = \"rsa\"`. Changing it forces a new certificate authority.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace(), int64planmodifier.UseStateForUnknown()},
				Validators:          []validator.Int64{int64validator.OneOf(rules.SSHRSAKeySizes...)},
			},
			"elliptic_curve": schema.StringAttribute{
				MarkdownDescription: "ECDSA curve, `p256` (default), `p384` or `p521`; only with `private_key_type = \"ecdsa\"`. Changing it forces a new certificate authority.",
				Optional:            true,
				Computed:            true,
				PlanModifiers:       keep(),
				Validators:          []validator.String{stringvalidator.OneOf(rules.SSHEllipticCurves...)},
			},
			"public_key": schema.StringAttribute{
				MarkdownDescription: "The public key in authorized_keys form, e.g. `ssh-ed25519 AAAA…`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"key_type": schema.StringAttribute{
				MarkdownDescription: "Type of the key pair, as the API reports it.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

// ValidateConfig applies the server's rule: key_size only with rsa, elliptic_curve only with ecdsa.
func (r *sshCAResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	checkSSHCAKey(ctx, req.Config, false, &resp.Diagnostics)
}

// ModifyPlan applies the same rule with a size or curve known only after apply counted as
// set: with a known key type, whether they may be set does not depend on their value.
func (r *sshCAResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.crud.ModifyPlan(ctx, req, resp)
	if !req.Plan.Raw.IsNull() {
		checkSSHCAKey(ctx, req.Config, true, &resp.Diagnostics)
	}
}

// checkSSHCAKey runs rules.SSHCAKey on a configuration. An unknown size or curve is skipped,
// or with unknownIsSet stands for a valid value (its own validator checks it once known).
func checkSSHCAKey(ctx context.Context, config tfsdk.Config, unknownIsSet bool, diags *diag.Diagnostics) {
	var m sshCAModel
	diags.Append(config.Get(ctx, &m)...)
	if diags.HasError() || m.PrivateKeyType.IsUnknown() || !unknownIsSet && (m.KeySize.IsUnknown() || m.EllipticCurve.IsUnknown()) {
		return
	}
	keyType := optional(m.PrivateKeyType)
	if keyType == nil {
		keyType = api.String(rules.DefaultSSHKeyType)
	}
	size, curve := m.KeySize.ValueInt64Pointer(), optional(m.EllipticCurve)
	if m.KeySize.IsUnknown() {
		size = &rules.SSHRSAKeySizes[0]
	}
	if m.EllipticCurve.IsUnknown() {
		curve = &rules.SSHEllipticCurves[0]
	}
	if err := rules.SSHCAKey(keyType, size, curve); err != nil {
		addViolation(diags, "Invalid key choice", err)
	}
}

func (r *sshCAResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *sshCAModel) (*api.SSHCertificateAuthority, error) {
		in := api.SSHCertificateAuthorityCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), PrivateKeyType: optional(m.PrivateKeyType), EllipticCurve: optional(m.EllipticCurve)}
		if !m.KeySize.IsNull() && !m.KeySize.IsUnknown() {
			in.KeySize = api.Int64(m.KeySize.ValueInt64())
		}
		return r.client.SSHCertificateAuthorities.Create(ctx, in)
	})
}

func (r *sshCAResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *sshCAModel) (*api.SSHCertificateAuthority, error) {
		return r.client.SSHCertificateAuthorities.Update(ctx, prior.ID.ValueString(), api.SSHCertificateAuthorityUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

// flattenSSHCA maps the API object; the API does not report the RSA size or the curve, so
// they are read off the public key (which also makes an import complete).
func flattenSSHCA(ca *api.SSHCertificateAuthority, m *sshCAModel) {
	m.ID = types.StringValue(ca.ID)
	m.Description = emptyAsNull(ca.Description, m.Description)
	m.Metadata = emptyAsNull(ca.Metadata, m.Metadata)
	m.PublicKey = types.StringValue(ca.PublicKey)
	m.KeyType = types.StringValue(ca.KeyType)
	m.PrivateKeyType = types.StringValue(ca.KeyType)
	m.CreatedAt = types.StringValue(ca.CreatedAt)
	m.KeySize, m.EllipticCurve = types.Int64Null(), types.StringNull()
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(ca.PublicKey))
	if err != nil {
		return
	}
	switch k := key.(ssh.CryptoPublicKey).CryptoPublicKey().(type) {
	case *rsa.PublicKey:
		m.KeySize = types.Int64Value(int64(k.N.BitLen()))
	case *ecdsa.PublicKey:
		m.EllipticCurve = types.StringValue(strings.ToLower(strings.ReplaceAll(k.Curve.Params().Name, "-", "")))
	}
}
