package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*reservedDomainResource)(nil)
	_ resource.ResourceWithImportState = (*reservedDomainResource)(nil)
)

// NewReservedDomainResource is warren_reserved_domain.
func NewReservedDomainResource() resource.Resource {
	return &reservedDomainResource{crud[reservedDomainModel, api.ReservedDomain]{
		what: "reserved domain", flatten: flattenReservedDomain,
		members: []validators.Members{validators.Conflicting(path.Root("certificate_id"), path.Root("certificate_management_policy"))},
	}}
}

type reservedDomainResource struct {
	crud[reservedDomainModel, api.ReservedDomain]
}

// reservedDomainModel is the same in the resource and the data sources.
type reservedDomainModel struct {
	ID                          types.String `tfsdk:"id"`
	Domain                      types.String `tfsdk:"domain"`
	Description                 types.String `tfsdk:"description"`
	Metadata                    types.String `tfsdk:"metadata"`
	CertificateID               types.String `tfsdk:"certificate_id"`
	CertificateManagementPolicy types.Object `tfsdk:"certificate_management_policy"`
	CertificateManagementStatus types.Object `tfsdk:"certificate_management_status"`
	CNAMETarget                 types.String `tfsdk:"cname_target"`
	ACMEChallengeCNAMETarget    types.String `tfsdk:"acme_challenge_cname_target"`
	ResolvesTo                  types.List   `tfsdk:"resolves_to"`
	CreatedAt                   types.String `tfsdk:"created_at"`
}

var (
	policyAttrTypes = map[string]attr.Type{"authority": types.StringType, "private_key_type": types.StringType}
	jobAttrTypes    = map[string]attr.Type{"error_code": types.StringType, "msg": types.StringType, "started_at": types.StringType, "retries_at": types.StringType}
	statusAttrTypes = map[string]attr.Type{"renews_at": types.StringType, "provisioning_job": types.ObjectType{AttrTypes: jobAttrTypes}}
)

func (r *reservedDomainResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_reserved_domain"
}

func (r *reservedDomainResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	stable := func(description string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: description, Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A reserved domain: a hostname of the account that edges can serve. Its TLS certificate is either uploaded (`certificate_id`) or obtained and renewed by the service (`certificate_management_policy`, the default for domains you bring).",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("reserved domain"),
			"domain": schema.StringAttribute{
				MarkdownDescription: "The hostname, e.g. `app.example.com` or `*.example.com`. The server stores it lowercased without a trailing dot; a difference in case alone is not a change. Changing it forces a new reserved domain.",
				Required:            true,
				PlanModifiers: []planmodifier.String{planmodifiers.NormalizedString(rules.NormalizeDomain), stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = rules.NormalizeDomain(req.StateValue.ValueString()) != rules.NormalizeDomain(req.PlanValue.ValueString())
				}, "A different domain (not only in case) forces a new reserved domain.", "A different domain (not only in case) forces a new reserved domain.")},
				Validators: []validator.String{validators.String("must be a fully qualified domain name", func(s string) error {
					return rules.ReservedDomain(rules.NormalizeDomain(s), "")
				})},
			},
			"description": descriptionAttribute("domain"),
			"metadata":    metadataAttribute(),
			"certificate_id": schema.StringAttribute{
				MarkdownDescription: "ID of an uploaded `warren_tls_certificate` to serve. Conflicts with `certificate_management_policy`. When neither is set, the server keeps its choice (a managed certificate for domains you bring).",
				Optional:            true,
				Computed:            true,
			},
			"certificate_management_policy": schema.SingleNestedAttribute{
				MarkdownDescription: "Have the service obtain and renew the certificate. Conflicts with `certificate_id`; setting it replaces an uploaded certificate.",
				Optional:            true,
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"authority": schema.StringAttribute{
						MarkdownDescription: "Certificate authority: `letsencrypt` (default).",
						Optional:            true,
						Computed:            true,
						Validators:          []validator.String{stringvalidator.OneOf(rules.CertificateAuthorities...)},
					},
					"private_key_type": schema.StringAttribute{
						MarkdownDescription: "Key type of the certificate: `ecdsa` (default) or `rsa`.",
						Optional:            true,
						Computed:            true,
						Validators:          []validator.String{stringvalidator.OneOf(rules.CertificateKeyTypes...)},
					},
				},
			},
			"certificate_management_status": schema.SingleNestedAttribute{
				MarkdownDescription: "Status of the managed certificate, null when the certificate is not managed.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"renews_at": schema.StringAttribute{MarkdownDescription: "When the certificate is renewed next.", Computed: true},
					"provisioning_job": schema.SingleNestedAttribute{
						MarkdownDescription: "The current issuance job.",
						Computed:            true,
						Attributes: map[string]schema.Attribute{
							"error_code": schema.StringAttribute{MarkdownDescription: "`DNS_ERROR`, `INTERNAL_ERROR` or null.", Computed: true},
							"msg":        schema.StringAttribute{MarkdownDescription: "What the job is doing.", Computed: true},
							"started_at": schema.StringAttribute{MarkdownDescription: "When the job started.", Computed: true},
							"retries_at": schema.StringAttribute{MarkdownDescription: "When a failed job is retried.", Computed: true},
						},
					},
				},
			},
			"cname_target":                stable("DNS CNAME target for a domain you bring; null for subdomains of the service's own domain."),
			"acme_challenge_cname_target": stable("CNAME target for `_acme-challenge.<domain>`, needed for managed certificates of wildcard domains you bring; null otherwise."),
			"resolves_to": schema.ListAttribute{
				MarkdownDescription: "Where the domain resolves: `global` or point-of-presence codes (`ap`, `au`, `eu`, `in`, `jp`, `sa`, `us`, `us-cal-1`). Null (not set) or empty means global resolution.",
				ElementType:         types.StringType,
				Optional:            true,
				Computed:            true,
				PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.OneOf(rules.ResolvesToValues...)), listvalidator.UniqueValues()},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *reservedDomainResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *reservedDomainModel) (*api.ReservedDomain, error) {
		in := api.ReservedDomainCreate{
			Domain: optional(m.Domain), Description: optional(m.Description), Metadata: optional(m.Metadata),
			CertificateID: optional(m.CertificateID), CertificateManagementPolicy: expandPolicy(ctx, m.CertificateManagementPolicy, &resp.Diagnostics),
			ResolvesTo: expandResolvesTo(m.ResolvesTo),
		}
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.ReservedDomains.Create(ctx, in)
	})
}

func (r *reservedDomainResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *reservedDomainModel) (*api.ReservedDomain, error) {
		in := api.ReservedDomainUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata),
			CertificateID: optional(plan.CertificateID), CertificateManagementPolicy: expandPolicy(ctx, plan.CertificateManagementPolicy, &resp.Diagnostics),
			ResolvesTo: expandResolvesTo(plan.ResolvesTo),
		}
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.ReservedDomains.Update(ctx, prior.ID.ValueString(), in)
	})
}

// expandPolicy returns the configured policy, nil when not given (null or still unknown).
func expandPolicy(ctx context.Context, v types.Object, diags *diag.Diagnostics) *api.CertificateManagementPolicy {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var p struct {
		Authority      types.String `tfsdk:"authority"`
		PrivateKeyType types.String `tfsdk:"private_key_type"`
	}
	diags.Append(v.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	return &api.CertificateManagementPolicy{Authority: p.Authority.ValueString(), PrivateKeyType: p.PrivateKeyType.ValueString()}
}

func expandResolvesTo(v types.List) []api.ResolvesTo {
	values := stringsOf(v)
	if values == nil {
		return nil
	}
	out := []api.ResolvesTo{}
	for _, s := range values {
		out = append(out, api.ResolvesTo{Value: s})
	}
	return out
}

// flattenReservedDomain maps the API object. The configured domain is kept when the API's
// differs only by normalisation (case, a trailing dot), so such a config never shows a diff.
func flattenReservedDomain(d *api.ReservedDomain, m *reservedDomainModel) {
	m.ID = types.StringValue(d.ID)
	if rules.NormalizeDomain(m.Domain.ValueString()) != d.Domain {
		m.Domain = types.StringValue(d.Domain)
	}
	m.Description = emptyAsNull(d.Description, m.Description)
	m.Metadata = emptyAsNull(d.Metadata, m.Metadata)
	m.CertificateID = types.StringNull()
	if d.Certificate != nil {
		m.CertificateID = types.StringValue(d.Certificate.ID)
	}
	m.CertificateManagementPolicy = types.ObjectNull(policyAttrTypes)
	if p := d.CertificateManagementPolicy; p != nil {
		m.CertificateManagementPolicy = types.ObjectValueMust(policyAttrTypes, map[string]attr.Value{
			"authority": types.StringValue(p.Authority), "private_key_type": types.StringValue(p.PrivateKeyType),
		})
	}
	m.CertificateManagementStatus = types.ObjectNull(statusAttrTypes)
	if st := d.CertificateManagementStatus; st != nil {
		job := types.ObjectNull(jobAttrTypes)
		if j := st.ProvisioningJob; j != nil {
			job = types.ObjectValueMust(jobAttrTypes, map[string]attr.Value{
				"error_code": types.StringPointerValue(j.ErrorCode), "msg": types.StringValue(j.Msg),
				"started_at": types.StringValue(j.StartedAt), "retries_at": types.StringPointerValue(j.RetriesAt),
			})
		}
		m.CertificateManagementStatus = types.ObjectValueMust(statusAttrTypes, map[string]attr.Value{"renews_at": types.StringPointerValue(st.RenewsAt), "provisioning_job": job})
	}
	m.CNAMETarget = types.StringPointerValue(d.CNAMETarget)
	m.ACMEChallengeCNAMETarget = types.StringPointerValue(d.ACMEChallengeCNAMETarget)
	m.ResolvesTo = types.ListNull(types.StringType)
	if d.ResolvesTo != nil {
		values := []string{}
		for _, v := range d.ResolvesTo {
			values = append(values, v.Value)
		}
		m.ResolvesTo = stringList(values)
	}
	m.CreatedAt = types.StringValue(d.CreatedAt)
}
