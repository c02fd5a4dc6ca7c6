package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure        = (*tlsCertificateResource)(nil)
	_ resource.ResourceWithImportState      = (*tlsCertificateResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*tlsCertificateResource)(nil)
	_ resource.ResourceWithConfigValidators = (*tlsCertificateResource)(nil)
)

// NewTLSCertificateResource is warren_tls_certificate.
func NewTLSCertificateResource() resource.Resource {
	return &tlsCertificateResource{crud[tlsCertificateResourceModel, api.TLSCertificate]{
		what: "TLS certificate", flatten: flattenTLSCertificateResource,
		members: []validators.Members{
			validators.ExactlyOneOf(path.Root("private_key_pem"), path.Root("private_key_pem_wo")),
			validators.AlsoRequires(path.Root("private_key_pem_wo_version"), path.Root("private_key_pem_wo")),
		},
	}}
}

type tlsCertificateResource struct {
	crud[tlsCertificateResourceModel, api.TLSCertificate]
}

// tlsCertificateModel holds what every TLS certificate schema shows (resource, data sources).
type tlsCertificateModel struct {
	ID                        types.String `tfsdk:"id"`
	Description               types.String `tfsdk:"description"`
	Metadata                  types.String `tfsdk:"metadata"`
	CertificatePEM            types.String `tfsdk:"certificate_pem"`
	SubjectCommonName         types.String `tfsdk:"subject_common_name"`
	SubjectAlternativeNames   types.Object `tfsdk:"subject_alternative_names"`
	IssuedAt                  types.String `tfsdk:"issued_at"`
	NotBefore                 types.String `tfsdk:"not_before"`
	NotAfter                  types.String `tfsdk:"not_after"`
	KeyUsages                 types.List   `tfsdk:"key_usages"`
	ExtendedKeyUsages         types.List   `tfsdk:"extended_key_usages"`
	PrivateKeyType            types.String `tfsdk:"private_key_type"`
	IssuerCommonName          types.String `tfsdk:"issuer_common_name"`
	SerialNumber              types.String `tfsdk:"serial_number"`
	SubjectOrganization       types.String `tfsdk:"subject_organization"`
	SubjectOrganizationalUnit types.String `tfsdk:"subject_organizational_unit"`
	SubjectLocality           types.String `tfsdk:"subject_locality"`
	SubjectProvince           types.String `tfsdk:"subject_province"`
	SubjectCountry            types.String `tfsdk:"subject_country"`
	CreatedAt                 types.String `tfsdk:"created_at"`
}

// tlsCertificateResourceModel adds the private key, given either as a sensitive value kept
// in state or as a write-only value that never reaches the plan or the state.
type tlsCertificateResourceModel struct {
	tlsCertificateModel
	PrivateKeyPEM          types.String `tfsdk:"private_key_pem"`
	PrivateKeyPEMWO        types.String `tfsdk:"private_key_pem_wo"`
	PrivateKeyPEMWOVersion types.Int64  `tfsdk:"private_key_pem_wo_version"`
}

var sanAttrTypes = map[string]attr.Type{
	"dns_names": types.ListType{ElemType: types.StringType},
	"ips":       types.ListType{ElemType: types.StringType},
}

func (r *tlsCertificateResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tls_certificate"
}

// replaceKeyDescription: a new key means a new certificate, except right after an import.
// The API never returns the key, so an imported certificate has no key (nor key version) in
// state, and recording the configured one is no reason to upload the certificate again.
const replaceKeyDescription = "Changing the key forces a new certificate; after an import the first apply only records it."

func (r *tlsCertificateResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	derived := func(description string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: description, Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	derivedList := func(description string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: description, Computed: true, ElementType: types.StringType, PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A TLS certificate uploaded with its private key, for reserved domains. The server checks the chain and the key and derives the other attributes from the leaf certificate; it never returns the key. Give the key either as `private_key_pem` (sensitive, kept in state) or as the write-only `private_key_pem_wo` (Terraform 1.11+, never stored) with `private_key_pem_wo_version`.\n\n" +
			"**Rotation while a reserved domain uses the certificate.** The PEMs cannot change in place, so a new certificate or key replaces the resource, and the server refuses to delete a certificate a reserved domain still uses (`ERR_1966`). Set `lifecycle { create_before_destroy = true }` on the certificate: one apply then creates the new certificate, updates the domain's `certificate_id` in place and deletes the old certificate last (see the `shop` example below). Without it Terraform deletes the old certificate first, which the server refuses.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("TLS certificate"),
			"description": descriptionAttribute("certificate"),
			"metadata":    metadataAttribute(),
			"certificate_pem": schema.StringAttribute{
				MarkdownDescription: "The certificate chain in PEM, leaf first, each certificate signed by the next. Changing it forces a new certificate.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"private_key_pem": schema.StringAttribute{
				MarkdownDescription: "The leaf's private key in PEM, unencrypted. Kept in state as a sensitive value; exactly one of `private_key_pem` and `private_key_pem_wo` is required. Changing it forces a new certificate (after an import, the first apply only records it).",
				Optional:            true,
				Sensitive:           true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
					func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
						resp.RequiresReplace = !req.StateValue.IsNull()
					}, replaceKeyDescription, replaceKeyDescription)},
			},
			"private_key_pem_wo": schema.StringAttribute{
				MarkdownDescription: "The leaf's private key in PEM, write-only: sent to the server when the certificate is created and never stored by Terraform. Requires `private_key_pem_wo_version`.",
				Optional:            true,
				WriteOnly:           true,
				Sensitive:           true,
			},
			"private_key_pem_wo_version": schema.Int64Attribute{
				MarkdownDescription: "Change this number to upload `private_key_pem_wo` again: since the key is immutable, a change forces a new certificate (after an import, the first apply only records it).",
				Optional:            true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplaceIf(
					func(_ context.Context, req planmodifier.Int64Request, resp *int64planmodifier.RequiresReplaceIfFuncResponse) {
						resp.RequiresReplace = !req.StateValue.IsNull()
					}, replaceKeyDescription, replaceKeyDescription)},
			},
			"subject_common_name": derived("Common name of the leaf's subject."),
			"subject_alternative_names": schema.SingleNestedAttribute{
				MarkdownDescription: "The leaf's subject alternative names.",
				Computed:            true,
				PlanModifiers:       []planmodifier.Object{objectplanmodifier.UseStateForUnknown()},
				Attributes: map[string]schema.Attribute{
					"dns_names": schema.ListAttribute{MarkdownDescription: "DNS names.", Computed: true, ElementType: types.StringType},
					"ips":       schema.ListAttribute{MarkdownDescription: "IP addresses.", Computed: true, ElementType: types.StringType},
				},
			},
			"issued_at":                   derived("When the service issued the certificate; null for uploaded certificates."),
			"not_before":                  derived("Start of the leaf's validity (RFC 3339)."),
			"not_after":                   derived("End of the leaf's validity (RFC 3339)."),
			"key_usages":                  derivedList("The leaf's key usages, e.g. `digital_signature`."),
			"extended_key_usages":         derivedList("The leaf's extended key usages, e.g. `server_auth`."),
			"private_key_type":            derived("Type of the private key: `rsa`, `ecdsa` or `ed25519`."),
			"issuer_common_name":          derived("Common name of the leaf's issuer."),
			"serial_number":               derived("Serial number of the leaf, lowercase hex."),
			"subject_organization":        derived("Organization of the leaf's subject, or empty."),
			"subject_organizational_unit": derived("Organizational unit of the leaf's subject, or empty."),
			"subject_locality":            derived("Locality of the leaf's subject, or empty."),
			"subject_province":            derived("Province of the leaf's subject, or empty."),
			"subject_country":             derived("Country of the leaf's subject, or empty."),
			"created_at":                  createdAtAttribute(),
		},
	}
}

// ValidateConfig runs the server's PEM checks (shape, headers, encrypted key, key/cert
// match, chain order) at plan time, once both values are known.
func (r *tlsCertificateResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m tlsCertificateResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key := m.PrivateKeyPEM
	if key.IsNull() {
		key = m.PrivateKeyPEMWO
	}
	if m.CertificatePEM.IsUnknown() || key.IsUnknown() || m.CertificatePEM.IsNull() || key.IsNull() {
		return
	}
	if _, err := rules.TLSCertificate(m.CertificatePEM.ValueString(), key.ValueString()); err != nil {
		addViolation(&resp.Diagnostics, "Invalid certificate or key", err)
	}
}

func (r *tlsCertificateResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	// A write-only value is only in the configuration, never in the plan.
	var keyWO types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("private_key_pem_wo"), &keyWO)...)
	r.create(ctx, req, resp, func(ctx context.Context, m *tlsCertificateResourceModel) (*api.TLSCertificate, error) {
		key := optional(m.PrivateKeyPEM)
		if key == nil {
			key = optional(keyWO)
		}
		return r.client.TLSCertificates.Create(ctx, api.TLSCertificateCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata),
			CertificatePEM: optional(m.CertificatePEM), PrivateKeyPEM: key,
		})
	})
}

func (r *tlsCertificateResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *tlsCertificateResourceModel) (*api.TLSCertificate, error) {
		return r.client.TLSCertificates.Update(ctx, prior.ID.ValueString(), api.TLSCertificateUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata)})
	})
}

func flattenTLSCertificate(c *api.TLSCertificate, m *tlsCertificateModel) {
	m.ID = types.StringValue(c.ID)
	m.Description = emptyAsNull(c.Description, m.Description)
	m.Metadata = emptyAsNull(c.Metadata, m.Metadata)
	m.CertificatePEM = types.StringValue(c.CertificatePEM)
	m.SubjectCommonName = types.StringValue(c.SubjectCommonName)
	m.SubjectAlternativeNames = types.ObjectValueMust(sanAttrTypes, map[string]attr.Value{
		"dns_names": stringList(c.SubjectAlternativeNames.DNSNames),
		"ips":       stringList(c.SubjectAlternativeNames.IPs),
	})
	m.IssuedAt = types.StringPointerValue(c.IssuedAt)
	m.NotBefore = types.StringValue(c.NotBefore)
	m.NotAfter = types.StringValue(c.NotAfter)
	m.KeyUsages = stringList(c.KeyUsages)
	m.ExtendedKeyUsages = stringList(c.ExtendedKeyUsages)
	m.PrivateKeyType = types.StringValue(c.PrivateKeyType)
	m.IssuerCommonName = types.StringValue(c.IssuerCommonName)
	m.SerialNumber = types.StringValue(c.SerialNumber)
	m.SubjectOrganization = types.StringValue(c.SubjectOrganization)
	m.SubjectOrganizationalUnit = types.StringValue(c.SubjectOrganizationalUnit)
	m.SubjectLocality = types.StringValue(c.SubjectLocality)
	m.SubjectProvince = types.StringValue(c.SubjectProvince)
	m.SubjectCountry = types.StringValue(c.SubjectCountry)
	m.CreatedAt = types.StringValue(c.CreatedAt)
}

// flattenTLSCertificateResource leaves the key attributes as they are: the API never
// returns the key, and the write-only one is never stored.
func flattenTLSCertificateResource(c *api.TLSCertificate, m *tlsCertificateResourceModel) {
	flattenTLSCertificate(c, &m.tlsCertificateModel)
	m.PrivateKeyPEMWO = types.StringNull()
}
