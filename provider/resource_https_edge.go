package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure        = (*httpsEdgeResource)(nil)
	_ resource.ResourceWithImportState      = (*httpsEdgeResource)(nil)
	_ resource.ResourceWithConfigValidators = (*httpsEdgeResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*httpsEdgeResource)(nil)
)

// httpsEdgeModules are the HTTPS edge's modules, in the API's order (mutual_tls is removed
// before tls_termination).
var httpsEdgeModules = moduleSlots[httpsEdgeModel, api.HTTPSEdgeCreate, api.HTTPSEdge]{
	slot("mutual_tls", "clients must present a certificate signed by one of these certificate authorities; without one the TLS handshake fails.", mutualTLSModule,
		func(m *httpsEdgeModel) *types.Object { return &m.MutualTLS },
		func(in *api.HTTPSEdgeCreate) **api.MutualTLSModuleRequest { return &in.MutualTLS },
		func(e *api.HTTPSEdge) *api.MutualTLSModule { return e.MutualTLS }).
		describedInData("The `mutual_tls` module, or null."),
	slot("tls_termination", "the lowest TLS version the edge accepts (TLS 1.2 when not set); older clients fail the handshake. TLS always ends at an HTTPS edge (`terminate_at` is `edge`).", tlsTerminationModule("https"),
		func(m *httpsEdgeModel) *types.Object { return &m.TLSTermination },
		func(in *api.HTTPSEdgeCreate) **api.TLSTerminationModuleRequest { return &in.TLSTermination },
		func(e *api.HTTPSEdge) *api.TLSTerminationModule { return e.TLSTermination }).
		describedInData("The `tls_termination` module, or null."),
}

// NewHTTPSEdgeResource is warren_https_edge.
func NewHTTPSEdgeResource() resource.Resource {
	return &httpsEdgeResource{crud[httpsEdgeModel, api.HTTPSEdge]{
		what: "HTTPS edge", flattenDiags: flattenHTTPSEdgeResource,
		members: httpsEdgeModules.memberRules(),
		modules: httpsEdgeModules.owned(func(c *client.Client, _ *httpsEdgeModel) moduleDeleter { return c.HTTPSEdges.DeleteModule }),
	}}
}

type httpsEdgeResource struct {
	crud[httpsEdgeModel, api.HTTPSEdge]
}

// httpsEdgeModel is the same in the resource and the data sources; the module objects differ
// in type (a data source's have no input-only members).
type httpsEdgeModel struct {
	edgeFields
	MutualTLS      types.Object `tfsdk:"mutual_tls"`
	TLSTermination types.Object `tfsdk:"tls_termination"`
	Routes         types.List   `tfsdk:"routes"`
}

func (r *httpsEdgeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_https_edge"
}

func (r *httpsEdgeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := edgeAttributes("HTTPS edge", httpsHostportsAttribute())
	attrs["routes"] = rschema.ListAttribute{
		MarkdownDescription: "IDs of the edge's routes, in creation order. Routes are managed with `warren_https_edge_route`; this list is what the API reports, refreshed with the edge (it is known after apply whenever the edge changes).",
		Computed:            true,
		ElementType:         types.StringType,
	}
	resp.Schema = rschema.Schema{
		MarkdownDescription: "An HTTPS edge serves HTTPS on reserved domains of the account (port 443). What happens to a request is decided by the edge's routes (`warren_https_edge_route`), each matching a path. Deleting the edge deletes its routes.",
		Attributes:          httpsEdgeModules.resourceAttributes(attrs),
	}
}

// httpsHostportsAttribute is the shared hostports attribute with the HTTPS edge's port rule.
func httpsHostportsAttribute() rschema.ListAttribute {
	a := hostportsAttribute("Where the edge listens: reserved domains of the account on port 443, e.g. `app.example.com:443` (a name under a reserved wildcard domain too). A hostport belongs to one edge.")
	a.Validators = append(a.Validators, listvalidator.ValueStringsAre(validators.String("the port is 443", port443)))
	return a
}

// port443 is the HTTPS and TLS edges' port rule (the API's ERR_7116), for a hostport whose
// form is right (hostportsValidator reports the others).
func port443(s string) error {
	if _, port, err := rules.Hostport(s); err == nil && port != 443 {
		return fmt.Errorf("the hostport %s must use port 443 (ERR_7116)", rules.Quote(s))
	}
	return nil
}

func (r *httpsEdgeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(ctx context.Context, m *httpsEdgeModel) (*api.HTTPSEdge, error) {
		in, diags := expandHTTPSEdge(ctx, m)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.HTTPSEdges.Create(ctx, in)
	})
}

func (r *httpsEdgeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(ctx context.Context, plan, prior *httpsEdgeModel) (*api.HTTPSEdge, error) {
		in, diags := expandHTTPSEdge(ctx, plan)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return nil, errInvalidPlan
		}
		in.Description, in.Metadata = clearable(plan.Description), clearable(plan.Metadata)
		return r.client.HTTPSEdges.Update(ctx, prior.ID.ValueString(), in)
	})
}

// expandHTTPSEdge is the create or PATCH body of the plan. The edge's modules hold no
// write-only member, so the plan alone is enough.
func expandHTTPSEdge(ctx context.Context, m *httpsEdgeModel) (api.HTTPSEdgeCreate, diag.Diagnostics) {
	var diags diag.Diagnostics
	in := api.HTTPSEdgeCreate{
		Description: optional(m.Description), Metadata: optional(m.Metadata), Hostports: stringsOf(m.Hostports),
	}
	httpsEdgeModules.expand(ctx, m, nil, &in, &diags)
	return in, diags
}

// flattenHTTPSEdge maps the API's edge onto m (the plan's or the state's model); data says m
// is a data source's.
func flattenHTTPSEdge(ctx context.Context, e *api.HTTPSEdge, m *httpsEdgeModel, data bool) diag.Diagnostics {
	var diags diag.Diagnostics
	m.edgeFields.set(e.Meta, e.Description, e.Metadata, e.Hostports)
	httpsEdgeModules.flatten(ctx, e, m, data, &diags)
	routes := make([]string, len(e.Routes))
	for i, rt := range e.Routes {
		routes[i] = rt.ID
	}
	m.Routes = stringList(routes)
	return diags
}

func flattenHTTPSEdgeResource(ctx context.Context, e *api.HTTPSEdge, m *httpsEdgeModel) diag.Diagnostics {
	return flattenHTTPSEdge(ctx, e, m, false)
}

func flattenHTTPSEdgeData(ctx context.Context, e *api.HTTPSEdge, m *httpsEdgeModel) diag.Diagnostics {
	return flattenHTTPSEdge(ctx, e, m, true)
}

// httpsEdgeDataSources are data.warren_https_edge and data.warren_https_edges.
var httpsEdgeDataSources = dataSources[api.HTTPSEdge, httpsEdgeModel]{
	name:        "https_edge",
	plural:      "https_edges",
	describeOne: "Reads an HTTPS edge by ID, with its modules and the IDs of its routes.",
	describeAll: "Lists the account's HTTPS edges with their modules and route IDs.",
	attributes: func() map[string]schema.Attribute {
		return httpsEdgeModules.dataAttributes(map[string]schema.Attribute{
			"description": computedString("What the edge is for."),
			"metadata":    computedString("Arbitrary user data."),
			"hostports":   computedStringList("Where the edge listens (`host:443`)."),
			"routes":      computedStringList("IDs of the edge's routes, in creation order."),
			"created_at":  computedString("When the edge was created (RFC 3339)."),
		})
	},
	flattenDiags: flattenHTTPSEdgeData,
	unfiltered:   true,
}
