package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*certificateAuthorityResource)(nil)
	_ resource.ResourceWithImportState = (*certificateAuthorityResource)(nil)
)

// NewCertificateAuthorityResource is warren_certificate_authority.
func NewCertificateAuthorityResource() resource.Resource {
	return &certificateAuthorityResource{crud[certificateAuthorityModel, api.CertificateAuthority]{
		what: "certificate authority", flatten: flattenCertificateAuthority,
	}}
}

type certificateAuthorityResource struct {
	crud[certificateAuthorityModel, api.CertificateAuthority]
}

// certificateAuthorityModel is the same in the resource and the data sources.
type certificateAuthorityModel struct {
	ID                types.String `tfsdk:"id"`
	Description       types.String `tfsdk:"description"`
	Metadata          types.String `tfsdk:"metadata"`
	CAPEM             types.String `tfsdk:"ca_pem"`
	SubjectCommonName types.String `tfsdk:"subject_common_name"`
	NotBefore         types.String `tfsdk:"not_before"`
	NotAfter          types.String `tfsdk:"not_after"`
	KeyUsages         types.List   `tfsdk:"key_usages"`
	ExtendedKeyUsages types.List   `tfsdk:"extended_key_usages"`
	CreatedAt         types.String `tfsdk:"created_at"`
}

func (r *certificateAuthorityResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_certificate_authority"
}

func (r *certificateAuthorityResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	derived := func(description string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: description, Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	derivedList := func(description string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: description, Computed: true, ElementType: types.StringType, PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A certificate authority whose certificate verifies client certificates in mutual TLS.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("certificate authority"),
			"description": descriptionAttribute("certificate authority"),
			"metadata":    metadataAttribute(),
			"ca_pem": schema.StringAttribute{
				MarkdownDescription: "Exactly one PEM certificate carrying the CA basic constraint. Changing it forces a new certificate authority.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{validators.String("must be one PEM CA certificate", func(s string) error {
					_, err := rules.CertificateAuthority(s)
					return err
				})},
			},
			"subject_common_name": derived("Common name of the certificate's subject."),
			"not_before":          derived("Start of the certificate's validity (RFC 3339)."),
			"not_after":           derived("End of the certificate's validity (RFC 3339)."),
			"key_usages":          derivedList("The certificate's key usages, e.g. `cert_sign`."),
			"extended_key_usages": derivedList("The certificate's extended key usages."),
			"created_at":          createdAtAttribute(),
		},
	}
}

func (r *certificateAuthorityResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *certificateAuthorityModel) (*api.CertificateAuthority, error) {
		return r.client.CertificateAuthorities.Create(ctx, api.CertificateAuthorityCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), CAPEM: optional(m.CAPEM)})
	})
}

func (r *certificateAuthorityResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *certificateAuthorityModel) (*api.CertificateAuthority, error) {
		return r.client.CertificateAuthorities.Update(ctx, prior.ID.ValueString(), api.CertificateAuthorityUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

func flattenCertificateAuthority(ca *api.CertificateAuthority, m *certificateAuthorityModel) {
	m.ID = types.StringValue(ca.ID)
	m.Description = emptyAsNull(ca.Description, m.Description)
	m.Metadata = emptyAsNull(ca.Metadata, m.Metadata)
	m.CAPEM = types.StringValue(ca.CAPEM)
	m.SubjectCommonName = types.StringValue(ca.SubjectCommonName)
	m.NotBefore = types.StringValue(ca.NotBefore)
	m.NotAfter = types.StringValue(ca.NotAfter)
	m.KeyUsages = stringList(ca.KeyUsages)
	m.ExtendedKeyUsages = stringList(ca.ExtendedKeyUsages)
	m.CreatedAt = types.StringValue(ca.CreatedAt)
}
