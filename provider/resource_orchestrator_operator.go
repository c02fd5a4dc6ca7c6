package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure      = (*orchestratorOperatorResource)(nil)
	_ resource.ResourceWithImportState    = (*orchestratorOperatorResource)(nil)
	_ resource.ResourceWithValidateConfig = (*orchestratorOperatorResource)(nil)
)

// NewOrchestratorOperatorResource is warren_orchestrator_operator.
func NewOrchestratorOperatorResource() resource.Resource {
	return &orchestratorOperatorResource{crud[orchestratorOperatorModel, api.OrchestratorOperator]{
		what: "orchestrator operator", flatten: flattenOrchestratorOperator,
	}}
}

type orchestratorOperatorResource struct {
	crud[orchestratorOperatorModel, api.OrchestratorOperator]
}

type orchestratorOperatorModel struct {
	ID              types.String             `tfsdk:"id"`
	Description     types.String             `tfsdk:"description"`
	Metadata        types.String             `tfsdk:"metadata"`
	EnabledFeatures types.Set                `tfsdk:"enabled_features"`
	Region          types.String             `tfsdk:"region"`
	Deployment      *operatorDeploymentModel `tfsdk:"deployment"`
	Binding         *operatorBindingModel    `tfsdk:"binding"`
	PrincipalID     types.String             `tfsdk:"principal_id"`
	CreatedAt       types.String             `tfsdk:"created_at"`
	UpdatedAt       types.String             `tfsdk:"updated_at"`
}

type operatorDeploymentModel struct {
	Name        types.String `tfsdk:"name"`
	Namespace   types.String `tfsdk:"namespace"`
	Version     types.String `tfsdk:"version"`
	ClusterName types.String `tfsdk:"cluster_name"`
}

type operatorBindingModel struct {
	EndpointSelectors types.List   `tfsdk:"endpoint_selectors"`
	CSR               types.String `tfsdk:"csr"`
	IngressEndpoint   types.String `tfsdk:"ingress_endpoint"`
	Cert              types.String `tfsdk:"cert"`
	NotBefore         types.String `tfsdk:"not_before"`
	NotAfter          types.String `tfsdk:"not_after"`
}

func (r *orchestratorOperatorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_orchestrator_operator"
}

// featureRule accepts the lowercase features only: the API lowercases, so another spelling
// would never match the state.
func featureRule(f string) error {
	if f != strings.ToLower(f) {
		return fmt.Errorf("the feature %q must be written in lowercase (%q)", f, strings.ToLower(f))
	}
	_, err := rules.EnabledFeatures([]string{f})
	return err
}

func selectorRule(s string) error {
	_, err := rules.EndpointSelector(0, s)
	return err
}

func csrRule(s string) error {
	_, err := rules.OperatorCSR(s)
	return err
}

func (r *orchestratorOperatorResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	deploymentMember := func(desc string, replace bool) schema.StringAttribute {
		a := schema.StringAttribute{
			MarkdownDescription: desc,
			Optional:            true,
			Validators:          []validator.String{validators.String(fmt.Sprintf("must be at most %d bytes without control characters", rules.MaxNameBytes), func(s string) error { return rules.OperatorDeploymentValue("value", s) })},
		}
		if replace {
			a.MarkdownDescription += " Changing it forces a new operator."
			a.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
		}
		return a
	}
	// The issued certificate stays while the CSR does not change.
	issued := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true, PlanModifiers: []planmodifier.String{keepWhileCSR()}}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An orchestrator operator is an operator running in a cluster (e.g. a Kubernetes ingress operator) that the account registers. With the `bindings` feature it gets a client certificate signed by the account's operator CA from the CSR it gives, and endpoints with the `orchestrator` binding that its CEL `endpoint_selectors` match are bound to it.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("orchestrator operator"),
			"description": descriptionAttribute("operator"),
			"metadata":    metadataAttribute(),
			"enabled_features": schema.SetAttribute{
				MarkdownDescription: "Features of the operator: `bindings`, `ingress`, `gateway` (lowercase). A `binding` may be given only with `bindings`. Defaults to none.",
				Optional:            true,
				Computed:            true,
				ElementType:         types.StringType,
				Default:             setdefault.StaticValue(types.SetValueMust(types.StringType, nil)),
				Validators:          []validator.Set{setvalidator.ValueStringsAre(validators.String("must be bindings, ingress or gateway, in lowercase", featureRule))},
			},
			"region": schema.StringAttribute{
				MarkdownDescription: "Region of the operator: `global` (the default) or a region code (" + strings.Join(rules.Regions, ", ") + ").",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("global"),
				Validators:          []validator.String{validators.String("must be global or a region code", rules.OperatorRegion)},
			},
			"deployment": schema.SingleNestedAttribute{
				MarkdownDescription: "Where the operator is deployed.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"name":         deploymentMember("Name of the deployment; updates in place.", false),
					"version":      deploymentMember("Version of the operator; updates in place.", false),
					"namespace":    deploymentMember("Namespace of the deployment.", true),
					"cluster_name": deploymentMember("Name of the cluster.", true),
				},
			},
			"binding": schema.SingleNestedAttribute{
				MarkdownDescription: "The endpoint binding; only with the `bindings` feature.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"endpoint_selectors": schema.ListAttribute{
						MarkdownDescription: "CEL expressions over `endpoint` (members `id`, `url`, `proto`, `scheme`, `host`, `hostport`, `port`, `type`, `region`, `name`, `description`, `metadata`, `upstream_url`, `upstream_protocol`, `bindings`, `pooling_enabled`), e.g. `endpoint.proto == \"https\"`: an endpoint with the `orchestrator` binding that one of them matches is bound to the operator. Checked at plan time.",
						Optional:            true,
						ElementType:         types.StringType,
						Validators: []validator.List{
							listvalidator.SizeBetween(1, rules.MaxOperatorSelectors),
							listvalidator.ValueStringsAre(validators.String("must be a boolean CEL expression over endpoint", selectorRule)),
						},
					},
					"csr": schema.StringAttribute{
						MarkdownDescription: "A PEM PKCS #10 certificate signing request (with a subject common name): the API issues `cert` from it. Changing it issues a new certificate in place. The API does not return it, so it is null after an import.",
						Optional:            true,
						Validators:          []validator.String{validators.String("must be a PEM certificate request with a valid signature", csrRule)},
					},
					"ingress_endpoint": schema.StringAttribute{
						MarkdownDescription: "`hostname:port` the operator connects to; defaults to the server's `ingress.<base domain>:443`.",
						Optional:            true,
						Computed:            true,
						PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
						Validators:          []validator.String{validators.String("must be hostname:port", rules.IngressEndpoint)},
					},
					"cert":       issued("The client certificate (PEM) issued from `csr`, signed by the account's operator CA; `\"\"` without a CSR."),
					"not_before": issued("Start of the certificate's validity (RFC 3339); `0001-01-01T00:00:00Z` without one."),
					"not_after":  issued("End of the certificate's validity (RFC 3339); `0001-01-01T00:00:00Z` without one."),
				},
			},
			"principal_id": schema.StringAttribute{
				MarkdownDescription: "ID of the user or service user that created the operator.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"created_at": createdAtAttribute(),
			"updated_at": schema.StringAttribute{MarkdownDescription: "When the operator was last changed (RFC 3339).", Computed: true},
		},
	}
}

// ValidateConfig refuses a binding without the bindings feature once the features are known.
func (r *orchestratorOperatorResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m orchestratorOperatorModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Binding == nil || m.EnabledFeatures.IsUnknown() {
		return
	}
	for _, e := range m.EnabledFeatures.Elements() {
		if e.IsUnknown() || stringOf(e) == rules.FeatureBindings {
			return
		}
	}
	resp.Diagnostics.AddAttributeError(path.Root("binding"), "Binding without the bindings feature", `A binding may be given only when enabled_features contains "bindings".`)
}

func (r *orchestratorOperatorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *orchestratorOperatorModel) (*api.OrchestratorOperator, error) {
		in := api.OrchestratorOperatorCreate{Description: optional(m.Description), Metadata: optional(m.Metadata), EnabledFeatures: setStrings(m.EnabledFeatures), Region: optional(m.Region)}
		if d := m.Deployment; d != nil {
			in.Deployment = &api.OperatorDeploymentInput{Name: optional(d.Name), Namespace: optional(d.Namespace), Version: optional(d.Version), ClusterName: optional(d.ClusterName)}
		}
		if b := m.Binding; b != nil {
			in.Binding = &api.OperatorBindingInput{EndpointSelectors: stringsOf(b.EndpointSelectors), CSR: optional(b.CSR), IngressEndpoint: optional(b.IngressEndpoint)}
		}
		return r.client.OrchestratorOperators.Create(ctx, in)
	})
}

func (r *orchestratorOperatorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *orchestratorOperatorModel) (*api.OrchestratorOperator, error) {
		in := api.OrchestratorOperatorUpdate{Description: clearable(plan.Description), Metadata: clearable(plan.Metadata), EnabledFeatures: setStrings(plan.EnabledFeatures), Region: optional(plan.Region)}
		// namespace and cluster_name force replacement; name and version clear with "".
		d := plan.Deployment
		if d == nil {
			d = &operatorDeploymentModel{}
		}
		in.Deployment = &api.OperatorDeploymentInput{Name: clearable(d.Name), Version: clearable(d.Version)}
		if b := plan.Binding; b != nil {
			in.Binding = &api.OperatorBindingInput{EndpointSelectors: stringsOf(b.EndpointSelectors), IngressEndpoint: optional(b.IngressEndpoint)}
			if in.Binding.EndpointSelectors == nil {
				in.Binding.EndpointSelectors = []string{} // removed from the configuration: cleared
			}
			if prior.Binding == nil || !b.CSR.Equal(prior.Binding.CSR) {
				in.Binding.CSR = optional(b.CSR)
			}
		}
		return r.client.OrchestratorOperators.Update(ctx, prior.ID.ValueString(), in)
	})
}

// flattenOrchestratorOperator maps the API's operator onto m, which holds the configured (or
// prior) values: deployment and binding stay null when they were and the API has nothing in
// them; the CSR, which the API never returns, is kept.
func flattenOrchestratorOperator(op *api.OrchestratorOperator, m *orchestratorOperatorModel) {
	m.ID = types.StringValue(op.ID)
	m.Description = emptyAsNull(op.Description, m.Description)
	m.Metadata = emptyAsNull(op.Metadata, m.Metadata)
	features := slices.Clone(op.EnabledFeatures)
	m.EnabledFeatures = types.SetValueMust(types.StringType, stringList(features).Elements())
	m.Region = types.StringValue(op.Region)
	m.PrincipalID = types.StringValue(op.Principal.ID)
	m.CreatedAt = types.StringValue(op.CreatedAt)
	m.UpdatedAt = types.StringValue(op.UpdatedAt)

	d := op.Deployment
	if m.Deployment == nil && d != (api.OperatorDeployment{}) {
		m.Deployment = &operatorDeploymentModel{}
	}
	if c := m.Deployment; c != nil {
		c.Name, c.Namespace = emptyAsNull(d.Name, c.Name), emptyAsNull(d.Namespace, c.Namespace)
		c.Version, c.ClusterName = emptyAsNull(d.Version, c.Version), emptyAsNull(d.ClusterName, c.ClusterName)
	}

	b := op.Binding
	if m.Binding == nil && slices.Contains(op.EnabledFeatures, rules.FeatureBindings) && (b.EndpointSelectors != nil || b.Cert.Cert != "") {
		m.Binding = &operatorBindingModel{CSR: types.StringNull()} // an import
	}
	if mb := m.Binding; mb != nil {
		mb.EndpointSelectors = types.ListNull(types.StringType)
		if b.EndpointSelectors != nil {
			mb.EndpointSelectors = stringList(b.EndpointSelectors)
		}
		mb.IngressEndpoint = types.StringValue(b.IngressEndpoint)
		mb.Cert, mb.NotBefore, mb.NotAfter = types.StringValue(b.Cert.Cert), types.StringValue(b.Cert.NotBefore), types.StringValue(b.Cert.NotAfter)
	}
}

// keepWhileCSR plans the state's certificate members while binding.csr does not change; a
// new CSR makes them unknown (a new certificate is issued).
func keepWhileCSR() planmodifier.String { return keepWhileCSRModifier{} }

type keepWhileCSRModifier struct{}

func (keepWhileCSRModifier) Description(context.Context) string {
	return "Keeps the issued certificate while the CSR does not change."
}
func (m keepWhileCSRModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (keepWhileCSRModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || !req.PlanValue.IsUnknown() {
		return
	}
	var planCSR, stateCSR types.String
	csr := path.Root("binding").AtName("csr")
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, csr, &planCSR)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, csr, &stateCSR)...)
	if !resp.Diagnostics.HasError() && planCSR.Equal(stateCSR) {
		resp.PlanValue = req.StateValue
	}
}
