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
	_ resource.ResourceWithConfigure        = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithImportState      = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*tlsEdgeResource)(nil)
	_ resource.ResourceWithConfigValidators = (*tlsEdgeResource)(nil)
)

var (
	tlsEdgeTermination   = tlsTerminationModule("tls")
	tlsEdgeTrafficPolicy = trafficPolicyModule(rules.PolicyOwnerTLSEdge)
)

// NewTLSEdgeResource is warren_tls_edge.
func NewTLSEdgeResource() resource.Resource {
	return &tlsEdgeResource{crud[tlsEdgeModel, api.TLSEdge]{
		what: "TLS edge", id: func(m *tlsEdgeModel) string { return m.ID.ValueString() }, flattenDiags: flattenTLSEdge(false),
		get: func(c *client.Client) getFunc[api.TLSEdge] { return c.TLSEdges.Get },
		del: func(c *client.Client) func(context.Context, string) error { return c.TLSEdges.Delete },
		modules: ownedModules[tlsEdgeModel]{
			// mutual_tls before tls_termination: it needs TLS terminated at the edge.
			of: func(m *tlsEdgeModel) []namedModule {
				return []namedModule{
					{"backend", m.Backend}, {"ip_restriction", m.IPRestriction}, {"mutual_tls", m.MutualTLS},
					{"tls_termination", m.TLSTermination}, {"traffic_policy", m.TrafficPolicy},
				}
			},
			del: func(c *client.Client, _ *tlsEdgeModel) moduleDeleter { return c.TLSEdges.DeleteModule },
		},
		members: slices.Concat(
			backendModule.memberRules(path.Root("backend")),
			ipRestrictionModule.memberRules(path.Root("ip_restriction")),
			mutualTLSModule.memberRules(path.Root("mutual_tls")),
			tlsEdgeTermination.memberRules(path.Root("tls_termination")),
			tlsEdgeTrafficPolicy.memberRules(path.Root("traffic_policy")),
		),
	}}
}

type tlsEdgeResource struct {
	crud[tlsEdgeModel, api.TLSEdge]
}

// tlsEdgeModel is the same in the resource and the data sources.
type tlsEdgeModel struct {
	ID             types.String `tfsdk:"id"`
	Description    types.String `tfsdk:"description"`
	Metadata       types.String `tfsdk:"metadata"`
	Hostports      types.List   `tfsdk:"hostports"`
	Backend        types.Object `tfsdk:"backend"`
	IPRestriction  types.Object `tfsdk:"ip_restriction"`
	MutualTLS      types.Object `tfsdk:"mutual_tls"`
	TLSTermination types.Object `tfsdk:"tls_termination"`
	TrafficPolicy  types.Object `tfsdk:"traffic_policy"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

const (
	tlsHostportsDesc   = "The reserved domains the edge serves, on port 443 (`\"${warren_reserved_domain.x.domain}:443\"`); each belongs to one edge."
	tlsBackendDesc     = "the backend (any kind) that receives the connections."
	tlsMutualDesc      = "clients must present a certificate signed by one of the certificate authorities. Needs TLS terminated at the edge."
	tlsTerminationDesc = "where TLS ends (`edge` or `upstream`) and the lowest version accepted. Without it TLS ends at the edge."
	tlsPolicyDesc      = "a traffic policy run on each connection (`on_tcp_connect` phase only)."
)

func (r *tlsEdgeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tls_edge"
}

func (r *tlsEdgeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A TLS edge forwards TLS connections on reserved domains to a backend, terminating TLS at the edge or passing it upstream, through its modules. Each module is null until configured; removing one from the configuration removes it on the server.",
		Attributes: map[string]schema.Attribute{
			"id":              idAttribute("TLS edge"),
			"description":     descriptionAttribute("edge"),
			"metadata":        metadataAttribute(),
			"hostports":       hostportsAttribute(tlsHostportsDesc),
			"backend":         backendModule.resourceAttribute(moduleDescription("backend", tlsBackendDesc)),
			"ip_restriction":  ipRestrictionModule.resourceAttribute(moduleDescription("ip_restriction", ipRestrictDesc)),
			"mutual_tls":      mutualTLSModule.resourceAttribute(moduleDescription("mutual_tls", tlsMutualDesc)),
			"tls_termination": tlsEdgeTermination.resourceAttribute(moduleDescription("tls_termination", tlsTerminationDesc)),
			"traffic_policy":  tlsEdgeTrafficPolicy.resourceAttribute(moduleDescription("traffic_policy", tlsPolicyDesc)),
			"created_at":      createdAtAttribute(),
		},
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

func (r *tlsEdgeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.createFrom(ctx, req, resp, func(ctx context.Context, p planned[tlsEdgeModel]) (*api.TLSEdge, error) {
		in, ok := expandTLSEdge(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return r.client.TLSEdges.Create(ctx, in)
	})
}

func (r *tlsEdgeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.updateFrom(ctx, req, resp, func(ctx context.Context, p planned[tlsEdgeModel]) (*api.TLSEdge, error) {
		in, ok := expandTLSEdge(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return r.client.TLSEdges.Update(ctx, p.prior.ID.ValueString(), in)
	})
}

// expandTLSEdge is the body of a create or PATCH: every module the plan has (a PATCH keeps
// the others; removed ones are deleted by the crud).
func expandTLSEdge(ctx context.Context, p planned[tlsEdgeModel], diags *diag.Diagnostics) (api.TLSEdgeCreate, bool) {
	in := api.TLSEdgeCreate{
		Description: clearable(p.plan.Description), Metadata: clearable(p.plan.Metadata), Hostports: stringsOf(p.plan.Hostports),
		Backend:        backendModule.request(ctx, p.plan.Backend, p.config.Backend, diags),
		IPRestriction:  ipRestrictionModule.request(ctx, p.plan.IPRestriction, p.config.IPRestriction, diags),
		MutualTLS:      mutualTLSModule.request(ctx, p.plan.MutualTLS, p.config.MutualTLS, diags),
		TLSTermination: tlsEdgeTermination.request(ctx, p.plan.TLSTermination, p.config.TLSTermination, diags),
		TrafficPolicy:  tlsEdgeTrafficPolicy.request(ctx, p.plan.TrafficPolicy, p.config.TrafficPolicy, diags),
	}
	return in, !diags.HasError()
}

// flattenTLSEdge maps a TLS edge onto the resource's model (data false) or a data source's.
func flattenTLSEdge(data bool) flattenFunc[api.TLSEdge, tlsEdgeModel] {
	return func(ctx context.Context, e *api.TLSEdge, m *tlsEdgeModel) (diags diag.Diagnostics) {
		m.ID = types.StringValue(e.ID)
		m.Description = emptyAsNull(e.Description, m.Description)
		m.Metadata = emptyAsNull(e.Metadata, m.Metadata)
		m.Hostports = hostportsValue(e.Hostports, m.Hostports)
		m.Backend = backendModule.of(ctx, e.Backend, m.Backend, data, &diags)
		m.IPRestriction = ipRestrictionModule.of(ctx, e.IPRestriction, m.IPRestriction, data, &diags)
		m.MutualTLS = mutualTLSModule.of(ctx, e.MutualTLS, m.MutualTLS, data, &diags)
		m.TLSTermination = tlsEdgeTermination.of(ctx, e.TLSTermination, m.TLSTermination, data, &diags)
		m.TrafficPolicy = tlsEdgeTrafficPolicy.of(ctx, e.TrafficPolicy, m.TrafficPolicy, data, &diags)
		m.CreatedAt = types.StringValue(e.CreatedAt)
		return diags
	}
}

var tlsEdgeDataSources = dataSources[api.TLSEdge, tlsEdgeModel]{
	name: "tls_edge", plural: "tls_edges",
	describeOne: "Reads a TLS edge by its ID, with its modules.",
	describeAll: "Lists the TLS edges, with their modules.",
	attributes: func() map[string]dschema.Attribute {
		return map[string]dschema.Attribute{
			"description":     computedString("What the edge is for; null when not set."),
			"metadata":        computedString("User data; null when not set."),
			"hostports":       computedStringList(tlsHostportsDesc),
			"backend":         backendModule.dataAttribute(moduleDescription("backend", tlsBackendDesc)),
			"ip_restriction":  ipRestrictionModule.dataAttribute(moduleDescription("ip_restriction", ipRestrictDesc)),
			"mutual_tls":      mutualTLSModule.dataAttribute(moduleDescription("mutual_tls", tlsMutualDesc)),
			"tls_termination": tlsEdgeTermination.dataAttribute(moduleDescription("tls_termination", tlsTerminationDesc)),
			"traffic_policy":  tlsEdgeTrafficPolicy.dataAttribute(moduleDescription("traffic_policy", tlsPolicyDesc)),
			"created_at":      computedString("When the edge was created (RFC 3339)."),
		}
	},
	get:          func(c *client.Client) getFunc[api.TLSEdge] { return c.TLSEdges.Get },
	list:         func(c *client.Client) listFunc[api.TLSEdge] { return c.TLSEdges.List },
	flattenDiags: flattenTLSEdge(true),
	unfiltered:   true,
}
