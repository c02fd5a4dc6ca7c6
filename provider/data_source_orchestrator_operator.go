package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// orchestratorOperatorDataSources are data.warren_orchestrator_operator and
// data.warren_orchestrator_operators.
var orchestratorOperatorDataSources = dataSources[api.OrchestratorOperator, orchestratorOperatorDataModel]{
	name:        "orchestrator_operator",
	plural:      "orchestrator_operators",
	describeOne: "Reads an orchestrator operator by ID.",
	describeAll: "Lists the account's orchestrator operators (the API takes no filter on them).",
	attributes:  orchestratorOperatorDataAttributes,
	flatten:     flattenOrchestratorOperatorData,
	unfiltered:  true,
}

// orchestratorOperatorDataModel is the operator as the API shows it: deployment and binding
// always present (the data sources have no CSR: the API never returns it).
type orchestratorOperatorDataModel struct {
	ID              types.String             `tfsdk:"id"`
	Description     types.String             `tfsdk:"description"`
	Metadata        types.String             `tfsdk:"metadata"`
	EnabledFeatures types.Set                `tfsdk:"enabled_features"`
	Region          types.String             `tfsdk:"region"`
	Deployment      *operatorDeploymentModel `tfsdk:"deployment"`
	Binding         *operatorDataBinding     `tfsdk:"binding"`
	PrincipalID     types.String             `tfsdk:"principal_id"`
	CreatedAt       types.String             `tfsdk:"created_at"`
	UpdatedAt       types.String             `tfsdk:"updated_at"`
}

type operatorDataBinding struct {
	EndpointSelectors types.List   `tfsdk:"endpoint_selectors"`
	IngressEndpoint   types.String `tfsdk:"ingress_endpoint"`
	Cert              types.String `tfsdk:"cert"`
	NotBefore         types.String `tfsdk:"not_before"`
	NotAfter          types.String `tfsdk:"not_after"`
}

func orchestratorOperatorDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":      computedString("What the operator is for; null when not set."),
		"metadata":         computedString("Arbitrary user data; null when not set."),
		"enabled_features": schema.SetAttribute{MarkdownDescription: "Enabled features (`bindings`, `ingress`, `gateway`).", Computed: true, ElementType: types.StringType},
		"region":           computedString("Region of the operator."),
		"deployment": schema.SingleNestedAttribute{MarkdownDescription: "Where the operator is deployed; `\"\"` members when unset.", Computed: true, Attributes: map[string]schema.Attribute{
			"name":         computedString("Name of the deployment."),
			"namespace":    computedString("Namespace of the deployment."),
			"version":      computedString("Version of the operator."),
			"cluster_name": computedString("Name of the cluster."),
		}},
		"binding": schema.SingleNestedAttribute{MarkdownDescription: "The endpoint binding (empty without the `bindings` feature).", Computed: true, Attributes: map[string]schema.Attribute{
			"endpoint_selectors": computedStringList("CEL endpoint selectors; null when none."),
			"ingress_endpoint":   computedString("`hostname:port` the operator connects to; `\"\"` without the bindings feature."),
			"cert":               computedString("The issued client certificate (PEM); `\"\"` when none."),
			"not_before":         computedString("Start of the certificate's validity (RFC 3339)."),
			"not_after":          computedString("End of the certificate's validity (RFC 3339)."),
		}},
		"principal_id": computedString("ID of the user or service user that created the operator."),
		"created_at":   computedString("When the operator was created (RFC 3339)."),
		"updated_at":   computedString("When the operator was last changed (RFC 3339)."),
	}
}

func flattenOrchestratorOperatorData(op *api.OrchestratorOperator, m *orchestratorOperatorDataModel) {
	m.ID = types.StringValue(op.ID)
	m.Description = emptyAsNull(op.Description, types.StringNull())
	m.Metadata = emptyAsNull(op.Metadata, types.StringNull())
	m.EnabledFeatures = types.SetValueMust(types.StringType, stringList(op.EnabledFeatures).Elements())
	m.Region = types.StringValue(op.Region)
	d := op.Deployment
	m.Deployment = &operatorDeploymentModel{Name: types.StringValue(d.Name), Namespace: types.StringValue(d.Namespace), Version: types.StringValue(d.Version), ClusterName: types.StringValue(d.ClusterName)}
	b := op.Binding
	m.Binding = &operatorDataBinding{
		EndpointSelectors: types.ListNull(types.StringType), IngressEndpoint: types.StringValue(b.IngressEndpoint),
		Cert: types.StringValue(b.Cert.Cert), NotBefore: types.StringValue(b.Cert.NotBefore), NotAfter: types.StringValue(b.Cert.NotAfter),
	}
	if b.EndpointSelectors != nil {
		m.Binding.EndpointSelectors = stringList(b.EndpointSelectors)
	}
	m.PrincipalID = types.StringValue(op.Principal.ID)
	m.CreatedAt = types.StringValue(op.CreatedAt)
	m.UpdatedAt = types.StringValue(op.UpdatedAt)
}
