package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure        = (*httpsEdgeRouteResource)(nil)
	_ resource.ResourceWithImportState      = (*httpsEdgeRouteResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*httpsEdgeRouteResource)(nil)
	_ resource.ResourceWithConfigValidators = (*httpsEdgeRouteResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*httpsEdgeRouteResource)(nil)
)

// NewHTTPSEdgeRouteResource is warren_https_edge_route.
func NewHTTPSEdgeRouteResource() resource.Resource {
	return &httpsEdgeRouteResource{crud[httpsEdgeRouteModel, api.HTTPSEdgeRoute]{
		what: "HTTPS edge route", id: routeKey, flattenDiags: flattenHTTPSEdgeRouteResource, members: routeModules.memberRules(),
		// The crud's ID is the route key; the route's own calls go under its edge.
		modules: routeModules.owned(func(c *client.Client, m *httpsEdgeRouteModel) moduleDeleter {
			return func(ctx context.Context, _, module string) error {
				return c.HTTPSEdgeRoutes.Under(m.EdgeID.ValueString()).DeleteModule(ctx, m.ID.ValueString(), module)
			}
		}),
		get: func(c *client.Client) getFunc[api.HTTPSEdgeRoute] {
			return func(ctx context.Context, key string) (*api.HTTPSEdgeRoute, error) {
				edgeID, id, _ := strings.Cut(key, "/")
				return c.HTTPSEdgeRoutes.Under(edgeID).Get(ctx, id)
			}
		},
		del: func(c *client.Client) func(context.Context, string) error {
			return func(ctx context.Context, key string) error {
				edgeID, id, _ := strings.Cut(key, "/")
				return c.HTTPSEdgeRoutes.Under(edgeID).Delete(ctx, id)
			}
		},
	}}
}

type httpsEdgeRouteResource struct {
	crud[httpsEdgeRouteModel, api.HTTPSEdgeRoute]
}

// routeKey is what the route's calls are made with: `edge_id/route_id`, the import ID too.
func routeKey(m *httpsEdgeRouteModel) string {
	return m.EdgeID.ValueString() + "/" + m.ID.ValueString()
}

// httpsEdgeRouteModel is the same in the resource and the data source; the module objects
// differ in type (a data source's have no input-only members).
type httpsEdgeRouteModel struct {
	ID                    types.String `tfsdk:"id"`
	EdgeID                types.String `tfsdk:"edge_id"`
	Description           types.String `tfsdk:"description"`
	Metadata              types.String `tfsdk:"metadata"`
	MatchType             types.String `tfsdk:"match_type"`
	Match                 types.String `tfsdk:"match"`
	Backend               types.Object `tfsdk:"backend"`
	IPRestriction         types.Object `tfsdk:"ip_restriction"`
	CircuitBreaker        types.Object `tfsdk:"circuit_breaker"`
	Compression           types.Object `tfsdk:"compression"`
	RequestHeaders        types.Object `tfsdk:"request_headers"`
	ResponseHeaders       types.Object `tfsdk:"response_headers"`
	WebhookVerification   types.Object `tfsdk:"webhook_verification"`
	OAuth                 types.Object `tfsdk:"oauth"`
	SAML                  types.Object `tfsdk:"saml"`
	OIDC                  types.Object `tfsdk:"oidc"`
	WebsocketTCPConverter types.Object `tfsdk:"websocket_tcp_converter"`
	UserAgentFilter       types.Object `tfsdk:"user_agent_filter"`
	TrafficPolicy         types.Object `tfsdk:"traffic_policy"`
	CreatedAt             types.String `tfsdk:"created_at"`
}

// routeModules are the 13 modules of a route, in the API's order.
var routeModules = moduleSlots[httpsEdgeRouteModel, api.HTTPSEdgeRouteCreate, api.HTTPSEdgeRoute]{
	slot("backend", "the backend (any kind) that serves the route's requests; without one (or disabled) they get 503 `ERR_8008`.", backendModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.Backend },
		func(in *api.HTTPSEdgeRouteCreate) **api.BackendModuleRequest { return &in.Backend },
		func(r *api.HTTPSEdgeRoute) *api.BackendModule { return r.Backend }),
	slot("ip_restriction", "only source addresses that its IP policies allow get through (an allow rule contains the address and no deny rule does); others get 403 `ERR_8003`.", ipRestrictionModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.IPRestriction },
		func(in *api.HTTPSEdgeRouteCreate) **api.IPRestrictionModuleRequest { return &in.IPRestriction },
		func(r *api.HTTPSEdgeRoute) *api.IPRestrictionModule { return r.IPRestriction }),
	slot("circuit_breaker", "stops sending requests to a failing backend for a while. One breaker per route, kept while the route's ID, backend and this module stay the same, counts the finished requests over the last `rolling_window` seconds (in `num_buckets` buckets) and their failures: an answer of status 500 or more (the upstream's own, or the edge's page for an upstream that cannot be reached, fails, times out or has no tunnel online); a request whose visitor left is not counted. When a request fails while the window holds at least `volume_threshold` finished requests of which at least `error_threshold_percentage` failed, the breaker opens: for `tripped_duration` seconds requests get 503 `ERR_8013` without reaching the backend. Then one request goes through as a probe (the others still get 503): its success closes the breaker, its failure opens it again.", circuitBreakerModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.CircuitBreaker },
		func(in *api.HTTPSEdgeRouteCreate) **api.CircuitBreakerModuleRequest { return &in.CircuitBreaker },
		func(r *api.HTTPSEdgeRoute) *api.CircuitBreakerModule { return r.CircuitBreaker }),
	slot("compression", "compresses answers with zstd or gzip, whichever the request's `Accept-Encoding` weighs higher (zstd when equal; no brotli), when they are at least 1024 bytes (or streamed without a `Content-Length`), have no `Content-Encoding` or `Content-Range` of their own, are not event streams or already compressed media (video, audio, JPEG, archives), and answer no `HEAD`, `Range` request or WebSocket upgrade. A compressed answer loses its `Content-Length` and `Accept-Ranges`; answers get `Vary: Accept-Encoding`. An upstream can send `No-Gzip-Compression` (removed by the edge) to keep an answer as it is.", toggleModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.Compression },
		func(in *api.HTTPSEdgeRouteCreate) **api.ToggleModuleRequest { return &in.Compression },
		func(r *api.HTTPSEdgeRoute) *api.ToggleModule { return r.Compression }),
	slot("request_headers", "headers added to or removed from requests before they reach the backend (removed first, then added; after the edge's `X-Forwarded-For`, `-Proto` and `-Host`).", headersModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.RequestHeaders },
		func(in *api.HTTPSEdgeRouteCreate) **api.HeadersModuleRequest { return &in.RequestHeaders },
		func(r *api.HTTPSEdgeRoute) *api.HeadersModule { return r.RequestHeaders }),
	slot("response_headers", "headers added to or removed from responses, the backend's and an HTTP response backend's alike.", headersModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.ResponseHeaders },
		func(in *api.HTTPSEdgeRouteCreate) **api.HeadersModuleRequest { return &in.ResponseHeaders },
		func(r *api.HTTPSEdgeRoute) *api.HeadersModule { return r.ResponseHeaders }),
	slot("webhook_verification", "only requests signed by the webhook provider, the way it signs (its header, payload, algorithm and timestamp tolerance, listed per provider in the `warren_https_edge_route` resource docs), get through, with their body byte for byte; others get 403 `ERR_8030` and never reach the upstream.", webhookVerificationModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.WebhookVerification },
		func(in *api.HTTPSEdgeRouteCreate) **api.WebhookVerificationModuleRequest {
			return &in.WebhookVerification
		},
		func(r *api.HTTPSEdgeRoute) *api.WebhookVerificationModule { return r.WebhookVerification }),
	slot("oauth", "users sign in with an OAuth provider: a visitor without a session is redirected to the provider and comes back to `https://<host>/_warren/auth/callback` (register it with your OAuth app for every host of the edge); the upstream receives `Warren-Auth-Provider`, `Warren-Auth-User-Id`, `Warren-Auth-User-Email` and `Warren-Auth-User-Name` (see Sign-in below). At most one of `oauth`, `oidc` and `saml` may be enabled on a route, and on one route of an edge.", oauthModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.OAuth },
		func(in *api.HTTPSEdgeRouteCreate) **api.OAuthModuleRequest { return &in.OAuth },
		func(r *api.HTTPSEdgeRoute) *api.OAuthModule { return r.OAuth }),
	slot("saml", "users sign in with a SAML identity provider before their requests reach the upstream, which receives who they are in `Warren-Auth-*` headers (see Traffic). The service provider's URLs and request-signing certificate are derived per route: give the identity provider `metadata_url`. At most one of `oauth`, `oidc` and `saml` may be enabled on a route, and on one route of an edge.", samlModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.SAML },
		func(in *api.HTTPSEdgeRouteCreate) **api.SAMLModuleRequest { return &in.SAML },
		func(r *api.HTTPSEdgeRoute) *api.SAMLModule { return r.SAML }),
	slot("oidc", "users sign in with an OpenID Connect issuer: a visitor without a session is redirected to the issuer and comes back to `https://<host>/_warren/auth/callback` (register it with the client for every host of the edge); the ID token is verified and the upstream receives `Warren-Auth-Provider` (`oidc`), `Warren-Auth-User-Id` (`sub`), `Warren-Auth-User-Email` and `Warren-Auth-User-Name` (see Sign-in below). At most one of `oauth`, `oidc` and `saml` may be enabled on a route, and on one route of an edge.", oidcModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.OIDC },
		func(in *api.HTTPSEdgeRouteCreate) **api.OIDCModuleRequest { return &in.OIDC },
		func(r *api.HTTPSEdgeRoute) *api.OIDCModule { return r.OIDC }),
	slot("websocket_tcp_converter", "turns WebSocket connections into TCP streams to the backend (a tunnel, normally of proto `tcp`, or a static address): the bytes of every message from the client, binary or text, are written to the stream, and the backend's bytes come back as binary messages. A request that is not a WebSocket upgrade gets 426 `ERR_8015`; a backend that cannot be reached gets the usual 502 `ERR_8006` (or 503) before the upgrade; a handshake from a page of another origin is refused (403). A message over 1 MiB closes the connection (1009); the backend closing its stream closes it normally (1000); nothing moving either way for the edge's idle timeout closes both.", toggleModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.WebsocketTCPConverter },
		func(in *api.HTTPSEdgeRouteCreate) **api.ToggleModuleRequest { return &in.WebsocketTCPConverter },
		func(r *api.HTTPSEdgeRoute) *api.ToggleModule { return r.WebsocketTCPConverter }),
	slot("user_agent_filter", "lets through or refuses requests by their first `User-Agent` header, matched against RE2 patterns (unanchored): a request matching an `allow` pattern passes, whatever `deny` says; otherwise one without a User-Agent is refused (an `allow` of `^$` lets it through), and so is one matching a `deny` pattern; any other passes. Refused requests get 403 `ERR_8014` and never reach the backend.", userAgentFilterModule,
		func(m *httpsEdgeRouteModel) *types.Object { return &m.UserAgentFilter },
		func(in *api.HTTPSEdgeRouteCreate) **api.UserAgentFilterModuleRequest { return &in.UserAgentFilter },
		func(r *api.HTTPSEdgeRoute) *api.UserAgentFilterModule { return r.UserAgentFilter }),
	slot("traffic_policy", "a traffic policy document with HTTP phases: `on_http_request` rules run on each request after `ip_restriction` (deny, restrict-ips, custom-response, redirect, url-rewrite, rate-limit, add-headers, remove-headers, close-connection, log), `on_http_response` rules on the upstream's answer (custom-response, deny, redirect, add-headers, remove-headers, compress-response, log); rules in order, a rule's actions in order when all its CEL expressions are true, a terminating action ends the request. Action configurations are checked at plan time. See the traffic policies guide.", trafficPolicyModule(rules.PolicyOwnerHTTPSRoute),
		func(m *httpsEdgeRouteModel) *types.Object { return &m.TrafficPolicy },
		func(in *api.HTTPSEdgeRouteCreate) **api.TrafficPolicyModuleRequest { return &in.TrafficPolicy },
		func(r *api.HTTPSEdgeRoute) *api.TrafficPolicyModule { return r.TrafficPolicy }),
}

func (r *httpsEdgeRouteResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_https_edge_route"
}

func (r *httpsEdgeRouteResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]rschema.Attribute{
		"id": idAttribute("route"),
		"edge_id": rschema.StringAttribute{
			MarkdownDescription: "ID of the HTTPS edge (`edghts_…`) the route belongs to. Changing it forces a new route.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators: []validator.String{validators.String("an HTTPS edge ID (edghts_…)", func(s string) error {
				if !ids.Valid(s, ids.HTTPSEdge) {
					return fmt.Errorf("%s is not an HTTPS edge ID (edghts_…)", rules.Quote(s))
				}
				return nil
			})},
		},
		"description": descriptionAttribute("route"),
		"metadata":    metadataAttribute(),
		"match_type": rschema.StringAttribute{
			MarkdownDescription: "How `match` is compared with the request path: `exact_path` or `path_prefix`.",
			Required:            true,
		},
		"match": rschema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("The path the route matches, starting with `/`, without spaces; at most %d bytes. Unique within the edge.", rules.MaxRouteMatchBytes),
			Required:            true,
		},
		"created_at": createdAtAttribute(),
	}
	resp.Schema = rschema.Schema{
		MarkdownDescription: "A route of an HTTPS edge: the requests whose path matches go through the route's modules to its backend. The route is deleted with its edge. Import it with the ID `edge_id/route_id`.",
		Attributes:          routeModules.resourceAttributes(attrs),
	}
}

// ValidateConfig checks match_type and match as the server does (rules.RouteMatch) and
// that at most one of oauth, oidc and saml is enabled (ERR_7079).
func (r *httpsEdgeRouteResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m httpsEdgeRouteModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	checkRule(&resp.Diagnostics, "Invalid route match", known(m.MatchType) && known(m.Match), func() error {
		return rules.RouteMatch(m.MatchType.ValueString(), m.Match.ValueString())
	})
	checkOneAuthModule(ctx, &m, &resp.Diagnostics)
}

// checkOneAuthModule reports a route on which more than one of oauth, oidc and saml is
// enabled (an omitted `enabled` is true). A module or `enabled` known only at apply may
// still be null or false, so only certain violations are reported.
func checkOneAuthModule(ctx context.Context, m *httpsEdgeRouteModel, diags *diag.Diagnostics) {
	var enabled []string
	for _, a := range []struct {
		name string
		v    types.Object
	}{{"oauth", m.OAuth}, {"saml", m.SAML}, {"oidc", m.OIDC}} {
		if !known(a.v) {
			continue
		}
		on, ok := a.v.Attributes()["enabled"].(types.Bool)
		if ok && (on.IsNull() || (known(on) && on.ValueBool())) {
			enabled = append(enabled, a.name)
		}
	}
	if len(enabled) > 1 {
		diags.AddAttributeError(path.Root(enabled[1]), "Only one authentication module per route",
			fmt.Sprintf("Only one of oauth, oidc and saml may be enabled on a route (the API's ERR_7079); enabled: %s. Disable or remove all but one.", strings.Join(enabled, ", ")))
	}
}

func (r *httpsEdgeRouteResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.createFrom(ctx, req, resp, func(ctx context.Context, p planned[httpsEdgeRouteModel]) (*api.HTTPSEdgeRoute, error) {
		in := expandHTTPSEdgeRoute(ctx, p.plan, p.config, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.HTTPSEdgeRoutes.Under(p.plan.EdgeID.ValueString()).Create(ctx, in)
	})
}

func (r *httpsEdgeRouteResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.updateFrom(ctx, req, resp, func(ctx context.Context, p planned[httpsEdgeRouteModel]) (*api.HTTPSEdgeRoute, error) {
		in := expandHTTPSEdgeRoute(ctx, p.plan, p.config, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		in.Description, in.Metadata = clearable(p.plan.Description), clearable(p.plan.Metadata)
		return r.client.HTTPSEdgeRoutes.Under(p.prior.EdgeID.ValueString()).Update(ctx, p.prior.ID.ValueString(), in)
	})
}

// ImportState takes `edge_id/route_id`.
func (r *httpsEdgeRouteResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	edgeID, id, ok := strings.Cut(req.ID, "/")
	if !ok || edgeID == "" || id == "" || strings.Contains(id, "/") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Import a route as edge_id/route_id, e.g. edghts_…/edghtsrt_…; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("edge_id"), edgeID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

// expandHTTPSEdgeRoute is the create or PATCH body of the plan; config holds the write-only
// secrets.
func expandHTTPSEdgeRoute(ctx context.Context, m, config *httpsEdgeRouteModel, diags *diag.Diagnostics) api.HTTPSEdgeRouteCreate {
	in := api.HTTPSEdgeRouteCreate{
		Description: optional(m.Description), Metadata: optional(m.Metadata),
		MatchType: optional(m.MatchType), Match: optional(m.Match),
	}
	routeModules.expand(ctx, m, config, &in, diags)
	return in
}

// flattenHTTPSEdgeRoute maps the API's route onto m (the plan's or the state's model); data
// says m is a data source's.
func flattenHTTPSEdgeRoute(ctx context.Context, r *api.HTTPSEdgeRoute, m *httpsEdgeRouteModel, data bool) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(r.ID)
	m.EdgeID = types.StringValue(r.EdgeID)
	m.Description = emptyAsNull(r.Description, m.Description)
	m.Metadata = emptyAsNull(r.Metadata, m.Metadata)
	m.MatchType = types.StringValue(r.MatchType)
	m.Match = types.StringValue(r.Match)
	routeModules.flatten(ctx, r, m, data, &diags)
	m.CreatedAt = types.StringValue(r.CreatedAt)
	return diags
}

func flattenHTTPSEdgeRouteResource(ctx context.Context, r *api.HTTPSEdgeRoute, m *httpsEdgeRouteModel) diag.Diagnostics {
	return flattenHTTPSEdgeRoute(ctx, r, m, false)
}

func flattenHTTPSEdgeRouteData(ctx context.Context, r *api.HTTPSEdgeRoute, m *httpsEdgeRouteModel) diag.Diagnostics {
	return flattenHTTPSEdgeRoute(ctx, r, m, true)
}

// httpsEdgeRouteDataSource is data.warren_https_edge_route: one route by edge_id and id.
func httpsEdgeRouteDataSource() datasource.DataSource {
	attrs := map[string]dschema.Attribute{
		"edge_id":     dschema.StringAttribute{MarkdownDescription: "ID of the route's HTTPS edge.", Required: true},
		"description": computedString("What the route is for."),
		"metadata":    computedString("Arbitrary user data."),
		"match_type":  computedString("`exact_path` or `path_prefix`."),
		"match":       computedString("The path the route matches."),
		"created_at":  computedString("When the route was created (RFC 3339)."),
	}
	return &objectDataSource[api.HTTPSEdgeRoute, httpsEdgeRouteModel]{
		typeName:    "_https_edge_route",
		description: "Reads a route of an HTTPS edge by `edge_id` and `id`, with its modules. Secrets the API returns (client secrets, webhook secrets) are shown as sensitive values.",
		attributes:  routeModules.dataAttributes(attrs),
		parentName:  "edge_id",
		getUnder: func(c *client.Client, edgeID string) getFunc[api.HTTPSEdgeRoute] {
			return c.HTTPSEdgeRoutes.Under(edgeID).Get
		},
		flatten: flattenHTTPSEdgeRouteData,
	}
}
