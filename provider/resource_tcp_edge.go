package provider

import (
	"context"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ resource.ResourceWithConfigure        = (*tcpEdgeResource)(nil)
	_ resource.ResourceWithImportState      = (*tcpEdgeResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*tcpEdgeResource)(nil)
	_ resource.ResourceWithConfigValidators = (*tcpEdgeResource)(nil)
)

// tcpEdgeModules are the TCP edge's modules, in the API's order.
var tcpEdgeModules = moduleSlots[tcpEdgeModel, api.TCPEdgeCreate, api.TCPEdge]{
	slot("backend", "the backend (any kind) that receives the connections.", backendModule,
		func(m *tcpEdgeModel) *types.Object { return &m.Backend },
		func(in *api.TCPEdgeCreate) **api.BackendModuleRequest { return &in.Backend },
		func(e *api.TCPEdge) *api.BackendModule { return e.Backend }),
	slot("ip_restriction", ipRestrictDesc, ipRestrictionModule,
		func(m *tcpEdgeModel) *types.Object { return &m.IPRestriction },
		func(in *api.TCPEdgeCreate) **api.IPRestrictionModuleRequest { return &in.IPRestriction },
		func(e *api.TCPEdge) *api.IPRestrictionModule { return e.IPRestriction }),
	slot("traffic_policy", edgePolicyDesc, trafficPolicyModule(rules.PolicyOwnerTCPEdge),
		func(m *tcpEdgeModel) *types.Object { return &m.TrafficPolicy },
		func(in *api.TCPEdgeCreate) **api.TrafficPolicyModuleRequest { return &in.TrafficPolicy },
		func(e *api.TCPEdge) *api.TrafficPolicyModule { return e.TrafficPolicy }),
}

// NewTCPEdgeResource is warren_tcp_edge.
func NewTCPEdgeResource() resource.Resource {
	return &tcpEdgeResource{newModuleEdge("TCP edge", tcpEdgeModules,
		func(c *client.Client) moduleDeleter { return c.TCPEdges.DeleteModule },
		newTCPEdgeRequest, tcpEdgeFields, apiTCPEdgeFields)}
}

type tcpEdgeResource struct {
	moduleEdge[tcpEdgeModel, api.TCPEdgeCreate, api.TCPEdge]
}

func newTCPEdgeRequest(description, metadata *string, hostports []string) api.TCPEdgeCreate {
	return api.TCPEdgeCreate{Description: description, Metadata: metadata, Hostports: hostports}
}

func tcpEdgeFields(m *tcpEdgeModel) *edgeFields { return &m.edgeFields }

func apiTCPEdgeFields(e *api.TCPEdge) (api.Meta, string, string, []string) {
	return e.Meta, e.Description, e.Metadata, e.Hostports
}

// tcpEdgeModel is the same in the resource and the data sources.
type tcpEdgeModel struct {
	edgeFields
	Backend       types.Object `tfsdk:"backend"`
	IPRestriction types.Object `tfsdk:"ip_restriction"`
	TrafficPolicy types.Object `tfsdk:"traffic_policy"`
}

// What the TCP and TLS edges say alike of their modules.
const (
	ipRestrictDesc = "only source addresses the IP policies allow get through; the connections of others are closed."
	edgePolicyDesc = "a traffic policy run on each connection (`on_tcp_connect` phase only), after `ip_restriction` and before the backend: rules in order, a rule's actions in order when all its CEL expressions are true; `deny`, `restrict-ips` and `close-connection` close the connection, `log` adds to its log line. Action configurations are checked at plan time. See the traffic policies guide."
)

const tcpHostportsDesc = "The reserved addresses (`warren_reserved_addr.*.addr`) the edge listens on; each belongs to one edge."

func (r *tcpEdgeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tcp_edge"
}

func (r *tcpEdgeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A TCP edge forwards TCP connections on reserved addresses to a backend, through its modules. Each module is null until configured; removing one from the configuration removes it on the server.",
		Attributes:          tcpEdgeModules.resourceAttributes(edgeAttributes("TCP edge", hostportsAttribute(tcpHostportsDesc))),
	}
}

var tcpEdgeDataSources = dataSources[api.TCPEdge, tcpEdgeModel]{
	name: "tcp_edge", plural: "tcp_edges",
	describeOne: "Reads a TCP edge by its ID, with its modules.",
	describeAll: "Lists the TCP edges, with their modules.",
	attributes: func() map[string]dschema.Attribute {
		return tcpEdgeModules.dataAttributes(edgeDataAttributes(tcpHostportsDesc))
	},
	flattenDiags: flattenEdge(tcpEdgeModules, tcpEdgeFields, apiTCPEdgeFields, true),
	unfiltered:   true,
}
