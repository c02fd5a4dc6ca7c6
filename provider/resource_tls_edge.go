package provider

import (
	"context"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure        = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithImportState      = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithConfigValidators = (*tlsEdgeResource)(nil)
)

// tlsEdgeModules are the TLS edge's modules, in the API's order (mutual_tls before
// tls_termination: it needs TLS terminated at the edge, so it is removed first).
var tlsEdgeModules = moduleSlots[tlsEdgeModel, api.TLSEdgeCreate, api.TLSEdge]{
	slot("backend", "the backend (any kind) that receives the connections.", backendModule,
		func(m *tlsEdgeModel) *types.Object { return &m.Backend },
		func(in *api.TLSEdgeCreate) **api.BackendModuleRequest { return &in.Backend },
		func(e *api.TLSEdge) *api.BackendModule { return e.Backend }),
	slot("ip_restriction", ipRestrictDesc, ipRestrictionModule,
		func(m *tlsEdgeModel) *types.Object { return &m.IPRestriction },
		func(in *api.TLSEdgeCreate) **api.IPRestrictionModuleRequest { return &in.IPRestriction },
		func(e *api.TLSEdge) *api.IPRestrictionModule { return e.IPRestriction }),
	slot("mutual_tls", "clients must present a certificate signed by one of the certificate authorities. Needs TLS terminated at the edge.", mutualTLSModule,
		func(m *tlsEdgeModel) *types.Object { return &m.MutualTLS },
		func(in *api.TLSEdgeCreate) **api.MutualTLSModuleRequest { return &in.MutualTLS },
		func(e *api.TLSEdge) *api.MutualTLSModule { return e.MutualTLS }),
	slot("tls_termination", "where TLS ends (`edge` or `upstream`) and the lowest version accepted. Without it TLS ends at the edge.", tlsTerminationModule("tls"),
		func(m *tlsEdgeModel) *types.Object { return &m.TLSTermination },
		func(in *api.TLSEdgeCreate) **api.TLSTerminationModuleRequest { return &in.TLSTermination },
		func(e *api.TLSEdge) *api.TLSTerminationModule { return e.TLSTermination }),
	slot("traffic_policy", edgePolicyDesc, trafficPolicyModule(rules.PolicyOwnerTLSEdge),
		func(m *tlsEdgeModel) *types.Object { return &m.TrafficPolicy },
		func(in *api.TLSEdgeCreate) **api.TrafficPolicyModuleRequest { return &in.TrafficPolicy },
		func(e *api.TLSEdge) *api.TrafficPolicyModule { return e.TrafficPolicy }),
}

// NewTLSEdgeResource is warren_tls_edge.
func NewTLSEdgeResource() resource.Resource {
	return &tlsEdgeResource{newModuleEdge("TLS edge", tlsEdgeModules,
		func(c *client.Client) moduleDeleter { return c.TLSEdges.DeleteModule },
		newTLSEdgeRequest, tlsEdgeFields, apiTLSEdgeFields)}
}

type tlsEdgeResource struct {
	moduleEdge[tlsEdgeModel, api.TLSEdgeCreate, api.TLSEdge]
}

func newTLSEdgeRequest(description, metadata *string, hostports []string) api.TLSEdgeCreate {
	return api.TLSEdgeCreate{Description: description, Metadata: metadata, Hostports: hostports}
}

func tlsEdgeFields(m *tlsEdgeModel) *edgeFields { return &m.edgeFields }

func apiTLSEdgeFields(e *api.TLSEdge) (api.Meta, string, string, []string) {
	return e.Meta, e.Description, e.Metadata, e.Hostports
}

// tlsEdgeModel is the same in the resource and the data sources.
type tlsEdgeModel struct {
	edgeFields
	Backend        types.Object `tfsdk:"backend"`
	IPRestriction  types.Object `tfsdk:"ip_restriction"`
	MutualTLS      types.Object `tfsdk:"mutual_tls"`
	TLSTermination types.Object `tfsdk:"tls_termination"`
	TrafficPolicy  types.Object `tfsdk:"traffic_policy"`
}

const tlsHostportsDesc = "The reserved domains the edge serves, on port 443 (`\"${warren_reserved_domain.x.domain}:443\"`); each belongs to one edge."

func (r *tlsEdgeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tls_edge"
}

func (r *tlsEdgeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A TLS edge forwards TLS connections on reserved domains to a backend, terminating TLS at the edge or passing it upstream, through its modules. Each module is null until configured; removing one from the configuration removes it on the server.",
		Attributes:          tlsEdgeModules.resourceAttributes(edgeAttributes("TLS edge", hostportsAttribute(tlsHostportsDesc))),
	}
}

// ValidateConfig: mutual TLS needs the decrypted stream, so not with TLS passed upstream
// (ERR_7062). Reported once terminate_at is known; the module may hold values known only at
// apply (a CA created in the same run): it is configured all the same.
func (r *tlsEdgeResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var mutual, termination types.Object
	var terminateAt types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("mutual_tls"), &mutual)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tls_termination"), &termination)...)
	if resp.Diagnostics.HasError() || mutual.IsNull() || !known(termination) {
		return
	}
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tls_termination").AtName("terminate_at"), &terminateAt)...)
	if known(terminateAt) && terminateAt.ValueString() == "upstream" {
		resp.Diagnostics.AddAttributeError(path.Root("mutual_tls"), "Mutual TLS needs TLS terminated at the edge",
			"mutual_tls cannot be used while tls_termination.terminate_at is \"upstream\" (ERR_7062): the edge never sees the client's certificate.")
	}
}

var tlsEdgeDataSources = dataSources[api.TLSEdge, tlsEdgeModel]{
	name: "tls_edge", plural: "tls_edges",
	describeOne: "Reads a TLS edge by its ID, with its modules.",
	describeAll: "Lists the TLS edges, with their modules.",
	attributes: func() map[string]dschema.Attribute {
		return tlsEdgeModules.dataAttributes(edgeDataAttributes(tlsHostportsDesc))
	},
	flattenDiags: flattenEdge(tlsEdgeModules, tlsEdgeFields, apiTLSEdgeFields, true),
	unfiltered:   true,
}
