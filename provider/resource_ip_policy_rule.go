package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure   = (*ipPolicyRuleResource)(nil)
	_ resource.ResourceWithImportState = (*ipPolicyRuleResource)(nil)
)

// NewIPPolicyRuleResource is warren_ip_policy_rule.
func NewIPPolicyRuleResource() resource.Resource {
	return &ipPolicyRuleResource{crud[ipPolicyRuleModel, api.IPPolicyRule]{
		what: "IP policy rule", flatten: flattenIPPolicyRule,
	}}
}

type ipPolicyRuleResource struct {
	crud[ipPolicyRuleModel, api.IPPolicyRule]
}

// ipPolicyRuleModel is the same in the resource and the data sources.
type ipPolicyRuleModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	CIDR        types.String `tfsdk:"cidr"`
	IPPolicyID  types.String `tfsdk:"ip_policy_id"`
	Action      types.String `tfsdk:"action"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

func (r *ipPolicyRuleResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_ip_policy_rule"
}

func (r *ipPolicyRuleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A rule of an IP policy: allow or deny one CIDR. A source IP passes a policy when it matches an `allow` rule and no `deny` rule.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("IP policy rule"),
			"description": descriptionAttribute("rule"),
			"metadata":    metadataAttribute(),
			"cidr": schema.StringAttribute{
				MarkdownDescription: "The CIDR, written as its network address (`10.0.0.0/8`, not `10.1.2.3/8`); unique within the policy. Updated in place.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{planmodifiers.NormalizedString(canonicalCIDR)},
				Validators: []validator.String{validators.String("must be a CIDR written as its network address", func(s string) error {
					_, err := rules.CIDR(s)
					return err
				})},
			},
			"ip_policy_id": schema.StringAttribute{
				MarkdownDescription: "ID of the IP policy the rule belongs to. Changing it forces a new rule.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"action": schema.StringAttribute{
				MarkdownDescription: "`allow` or `deny`. Changing it forces a new rule.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.OneOf(rules.IPRuleActions...)},
			},
			"created_at": createdAtAttribute(),
		},
	}
}

func (r *ipPolicyRuleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *ipPolicyRuleModel) (*api.IPPolicyRule, error) {
		return r.client.IPPolicyRules.Create(ctx, api.IPPolicyRuleCreate{
			Description: optional(m.Description), Metadata: optional(m.Metadata),
			CIDR: optional(m.CIDR), IPPolicyID: optional(m.IPPolicyID), Action: optional(m.Action),
		})
	})
}

func (r *ipPolicyRuleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *ipPolicyRuleModel) (*api.IPPolicyRule, error) {
		return r.client.IPPolicyRules.Update(ctx, prior.ID.ValueString(), api.IPPolicyRuleUpdate{
			Description: clearable(plan.Description), Metadata: clearable(plan.Metadata), CIDR: optional(plan.CIDR),
		})
	})
}

// flattenIPPolicyRule keeps the configured CIDR when the API's canonical form (IPv6
// lowercased) says the same, so such a config never shows a diff.
func flattenIPPolicyRule(rule *api.IPPolicyRule, m *ipPolicyRuleModel) {
	m.ID = types.StringValue(rule.ID)
	m.Description = emptyAsNull(rule.Description, m.Description)
	m.Metadata = emptyAsNull(rule.Metadata, m.Metadata)
	if canonicalCIDR(m.CIDR.ValueString()) != rule.CIDR {
		m.CIDR = types.StringValue(rule.CIDR)
	}
	m.IPPolicyID = types.StringValue(rule.IPPolicy.ID)
	m.Action = types.StringValue(rule.Action)
	m.CreatedAt = types.StringValue(rule.CreatedAt)
}

// canonicalCIDR is a CIDR as the API writes it (IPv6 lowercased), or s itself when invalid.
func canonicalCIDR(s string) string {
	if canonical, err := rules.CIDR(s); err == nil {
		return canonical
	}
	return s
}
