package provider

import (
	"context"
	"slices"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

// The TCP edge's modules, in the order removed ones are deleted.
var tcpEdgeTrafficPolicy = trafficPolicyModule(rules.PolicyOwnerTCPEdge)

// NewTCPEdgeResource is warren_tcp_edge.
func NewTCPEdgeResource() resource.Resource {
	return &tcpEdgeResource{crud[tcpEdgeModel, api.TCPEdge]{
		what: "TCP edge", id: func(m *tcpEdgeModel) string { return m.ID.ValueString() }, flattenDiags: flattenTCPEdge(false),
		get: func(c *client.Client) getFunc[api.TCPEdge] { return c.TCPEdges.Get },
		del: func(c *client.Client) func(context.Context, string) error { return c.TCPEdges.Delete },
		modules: ownedModules[tcpEdgeModel]{
			of: func(m *tcpEdgeModel) []namedModule {
				return []namedModule{{"backend", m.Backend}, {"ip_restriction", m.IPRestriction}, {"traffic_policy", m.TrafficPolicy}}
			},
			del: func(c *client.Client, _ *tcpEdgeModel) moduleDeleter { return c.TCPEdges.DeleteModule },
		},
		members: slices.Concat(
			backendModule.memberRules(path.Root("backend")),
			ipRestrictionModule.memberRules(path.Root("ip_restriction")),
			tcpEdgeTrafficPolicy.memberRules(path.Root("traffic_policy")),
		),
	}}
}

type tcpEdgeResource struct {
	crud[tcpEdgeModel, api.TCPEdge]
}

// tcpEdgeModel is the same in the resource and the data sources.
type tcpEdgeModel struct {
	ID            types.String `tfsdk:"id"`
	Description   types.String `tfsdk:"description"`
	Metadata      types.String `tfsdk:"metadata"`
	Hostports     types.List   `tfsdk:"hostports"`
	Backend       types.Object `tfsdk:"backend"`
	IPRestriction types.Object `tfsdk:"ip_restriction"`
	TrafficPolicy types.Object `tfsdk:"traffic_policy"`
	CreatedAt     types.String `tfsdk:"created_at"`
}

const (
	tcpHostportsDesc = "The reserved addresses (`warren_reserved_addr.*.addr`) the edge listens on; each belongs to one edge."
	tcpBackendDesc   = "the backend (any kind) that receives the connections."
	ipRestrictDesc   = "only source addresses the IP policies allow get through."
	tcpPolicyDesc    = "a traffic policy run on each connection (`on_tcp_connect` phase only)."
)

func (r *tcpEdgeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tcp_edge"
}

func (r *tcpEdgeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A TCP edge forwards TCP connections on reserved addresses to a backend, through its modules. Each module is null until configured; removing one from the configuration removes it on the server.",
		Attributes: map[string]schema.Attribute{
			"id":             idAttribute("TCP edge"),
			"description":    descriptionAttribute("edge"),
			"metadata":       metadataAttribute(),
			"hostports":      hostportsAttribute(tcpHostportsDesc),
			"backend":        backendModule.resourceAttribute(moduleDescription("backend", tcpBackendDesc)),
			"ip_restriction": ipRestrictionModule.resourceAttribute(moduleDescription("ip_restriction", ipRestrictDesc)),
			"traffic_policy": tcpEdgeTrafficPolicy.resourceAttribute(moduleDescription("traffic_policy", tcpPolicyDesc)),
			"created_at":     createdAtAttribute(),
		},
	}
}

func (r *tcpEdgeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.createFrom(ctx, req, resp, func(ctx context.Context, p planned[tcpEdgeModel]) (*api.TCPEdge, error) {
		in, ok := expandTCPEdge(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return r.client.TCPEdges.Create(ctx, in)
	})
}

func (r *tcpEdgeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.updateFrom(ctx, req, resp, func(ctx context.Context, p planned[tcpEdgeModel]) (*api.TCPEdge, error) {
		in, ok := expandTCPEdge(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return r.client.TCPEdges.Update(ctx, p.prior.ID.ValueString(), in)
	})
}

// expandTCPEdge is the body of a create or PATCH: every module the plan has (a PATCH keeps
// the others; removed ones are deleted by the crud).
func expandTCPEdge(ctx context.Context, p planned[tcpEdgeModel], diags *diag.Diagnostics) (api.TCPEdgeCreate, bool) {
	in := api.TCPEdgeCreate{
		Description: clearable(p.plan.Description), Metadata: clearable(p.plan.Metadata), Hostports: stringsOf(p.plan.Hostports),
		Backend:       backendModule.request(ctx, p.plan.Backend, p.config.Backend, diags),
		IPRestriction: ipRestrictionModule.request(ctx, p.plan.IPRestriction, p.config.IPRestriction, diags),
		TrafficPolicy: tcpEdgeTrafficPolicy.request(ctx, p.plan.TrafficPolicy, p.config.TrafficPolicy, diags),
	}
	return in, !diags.HasError()
}

// flattenTCPEdge maps a TCP edge onto the resource's model (data false) or a data source's.
func flattenTCPEdge(data bool) flattenFunc[api.TCPEdge, tcpEdgeModel] {
	return func(ctx context.Context, e *api.TCPEdge, m *tcpEdgeModel) (diags diag.Diagnostics) {
		m.ID = types.StringValue(e.ID)
		m.Description = emptyAsNull(e.Description, m.Description)
		m.Metadata = emptyAsNull(e.Metadata, m.Metadata)
		m.Hostports = hostportsValue(e.Hostports, m.Hostports)
		m.Backend = backendModule.of(ctx, e.Backend, m.Backend, data, &diags)
		m.IPRestriction = ipRestrictionModule.of(ctx, e.IPRestriction, m.IPRestriction, data, &diags)
		m.TrafficPolicy = tcpEdgeTrafficPolicy.of(ctx, e.TrafficPolicy, m.TrafficPolicy, data, &diags)
		m.CreatedAt = types.StringValue(e.CreatedAt)
		return diags
	}
}

var tcpEdgeDataSources = dataSources[api.TCPEdge, tcpEdgeModel]{
	name: "tcp_edge", plural: "tcp_edges",
	describeOne: "Reads a TCP edge by its ID, with its modules.",
	describeAll: "Lists the TCP edges, with their modules.",
	attributes: func() map[string]dschema.Attribute {
		return map[string]dschema.Attribute{
			"description":    computedString("What the edge is for; null when not set."),
			"metadata":       computedString("User data; null when not set."),
			"hostports":      computedStringList(tcpHostportsDesc),
			"backend":        backendModule.dataAttribute(moduleDescription("backend", tcpBackendDesc)),
			"ip_restriction": ipRestrictionModule.dataAttribute(moduleDescription("ip_restriction", ipRestrictDesc)),
			"traffic_policy": tcpEdgeTrafficPolicy.dataAttribute(moduleDescription("traffic_policy", tcpPolicyDesc)),
			"created_at":     computedString("When the edge was created (RFC 3339)."),
		}
	},
	get:          func(c *client.Client) getFunc[api.TCPEdge] { return c.TCPEdges.Get },
	list:         func(c *client.Client) listFunc[api.TCPEdge] { return c.TCPEdges.List },
	flattenDiags: flattenTCPEdge(true),
	unfiltered:   true,
}
