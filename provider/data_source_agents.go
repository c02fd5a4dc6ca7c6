package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Agents create tunnel sessions, tunnels and endpoints by connecting; the API and these data
// sources only read them. They exist while the agent is connected: reading one after its
// agent has gone is the API's 404.

// tunnelSessionDataSources are data.warren_tunnel_session and data.warren_tunnel_sessions.
var tunnelSessionDataSources = dataSources[api.TunnelSession, tunnelSessionModel]{
	name:        "tunnel_session",
	plural:      "tunnel_sessions",
	describeOne: "Reads a connected agent's tunnel session by ID.",
	describeAll: "Lists the account's tunnel sessions (one per connected agent), optionally narrowed by a CEL filter on `id`, `metadata`, `agent_version`, `ip`, `os`, `region`, `started_at` and `credential`.",
	attributes:  tunnelSessionDataAttributes,
	flatten:     flattenTunnelSession,
}

// tunnelDataSources are data.warren_tunnel and data.warren_tunnels.
var tunnelDataSources = dataSources[api.Tunnel, tunnelModel]{
	name:        "tunnel",
	plural:      "tunnels",
	describeOne: "Reads a tunnel of a connected agent by ID.",
	describeAll: "Lists the account's tunnels (the API takes no filter on them).",
	attributes:  tunnelDataAttributes,
	flatten:     flattenTunnel,
	unfiltered:  true,
}

// endpointDataSources are data.warren_endpoint and data.warren_endpoints.
var endpointDataSources = dataSources[api.Endpoint, endpointModel]{
	name:        "endpoint",
	plural:      "endpoints",
	describeOne: "Reads the endpoint of an agent's tunnel by ID.",
	describeAll: "Lists the account's endpoints, optionally narrowed by a CEL filter on `id`, `created_at`, `updated_at`, `description`, `metadata`, `url`, `proto`, `type`, `host`, `hostport`, `region`, `bindings`, `tunnel`, `tunnel_session`, `domain` and `tcp_addr`.",
	attributes:  endpointDataAttributes,
	flatten:     flattenEndpoint,
}

type tunnelSessionModel struct {
	ID           types.String `tfsdk:"id"`
	AgentVersion types.String `tfsdk:"agent_version"`
	CredentialID types.String `tfsdk:"credential_id"`
	IP           types.String `tfsdk:"ip"`
	Metadata     types.String `tfsdk:"metadata"`
	OS           types.String `tfsdk:"os"`
	Region       types.String `tfsdk:"region"`
	StartedAt    types.String `tfsdk:"started_at"`
	Transport    types.String `tfsdk:"transport"`
}

func tunnelSessionDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"agent_version": computedString("Version of the agent."),
		"credential_id": computedString("ID of the tunnel credential the agent authenticated with."),
		"ip":            computedString("The agent's source IP address."),
		"metadata":      computedString("Metadata from the agent's configuration; null when it gave none."),
		"os":            computedString("Operating system of the agent, e.g. `linux`."),
		"region":        computedString("Region the agent connected to."),
		"started_at":    computedString("When the session started (RFC 3339)."),
		"transport":     computedString("The agent protocol, e.g. `warren/v2`."),
	}
}

func flattenTunnelSession(s *api.TunnelSession, m *tunnelSessionModel) {
	m.ID = types.StringValue(s.ID)
	m.AgentVersion = types.StringValue(s.AgentVersion)
	m.CredentialID = types.StringValue(s.Credential.ID)
	m.IP = types.StringValue(s.IP)
	m.Metadata = emptyAsNull(s.Metadata, types.StringNull())
	m.OS = types.StringValue(s.OS)
	m.Region = types.StringValue(s.Region)
	m.StartedAt = types.StringValue(s.StartedAt)
	m.Transport = types.StringValue(s.Transport)
}

type tunnelModel struct {
	ID              types.String `tfsdk:"id"`
	PublicURL       types.String `tfsdk:"public_url"`
	StartedAt       types.String `tfsdk:"started_at"`
	Region          types.String `tfsdk:"region"`
	Metadata        types.String `tfsdk:"metadata"`
	ForwardsTo      types.String `tfsdk:"forwards_to"`
	Proto           types.String `tfsdk:"proto"`
	TunnelSessionID types.String `tfsdk:"tunnel_session_id"`
	EndpointID      types.String `tfsdk:"endpoint_id"`
	Labels          types.Map    `tfsdk:"labels"`
	Backends        types.List   `tfsdk:"backends"`
}

func tunnelDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"public_url":        computedString("Public URL of a hostname or address tunnel; null for a labeled tunnel."),
		"started_at":        computedString("When the tunnel started (RFC 3339)."),
		"region":            computedString("Region of the tunnel."),
		"metadata":          computedString("Metadata from the agent's configuration; null when it gave none."),
		"forwards_to":       computedString("Where the agent forwards the tunnel's traffic."),
		"proto":             computedString("`http`, `https`, `tcp` or `tls`."),
		"tunnel_session_id": computedString("ID of the agent's tunnel session."),
		"endpoint_id":       computedString("ID of the tunnel's endpoint; null for a labeled (tunnel group) tunnel."),
		"labels":            schema.MapAttribute{MarkdownDescription: "Labels of a tunnel-group tunnel; null for a hostname or address tunnel.", Computed: true, ElementType: types.StringType},
		"backends":          computedStringList("IDs of the tunnel group backends whose labels the tunnel's labels match."),
	}
}

func flattenTunnel(t *api.Tunnel, m *tunnelModel) {
	m.ID = types.StringValue(t.ID)
	m.PublicURL = emptyAsNull(t.PublicURL, types.StringNull())
	m.StartedAt = types.StringValue(t.StartedAt)
	m.Region = types.StringValue(t.Region)
	m.Metadata = emptyAsNull(t.Metadata, types.StringNull())
	m.ForwardsTo = types.StringValue(t.ForwardsTo)
	m.Proto = types.StringValue(t.Proto)
	m.TunnelSessionID = types.StringValue(t.TunnelSession.ID)
	m.EndpointID = refIDOrNull(t.Endpoint)
	m.Labels = types.MapNull(types.StringType)
	if t.Labels != nil {
		m.Labels = stringMap(t.Labels)
	}
	m.Backends = stringList(refIDs(t.Backends))
}

type endpointModel struct {
	ID               types.String `tfsdk:"id"`
	CreatedAt        types.String `tfsdk:"created_at"`
	UpdatedAt        types.String `tfsdk:"updated_at"`
	Region           types.String `tfsdk:"region"`
	URL              types.String `tfsdk:"url"`
	PublicURL        types.String `tfsdk:"public_url"`
	Proto            types.String `tfsdk:"proto"`
	Scheme           types.String `tfsdk:"scheme"`
	Host             types.String `tfsdk:"host"`
	Hostport         types.String `tfsdk:"hostport"`
	Port             types.Int64  `tfsdk:"port"`
	Type             types.String `tfsdk:"type"`
	Metadata         types.String `tfsdk:"metadata"`
	Description      types.String `tfsdk:"description"`
	Name             types.String `tfsdk:"name"`
	DomainID         types.String `tfsdk:"domain_id"`
	TCPAddrID        types.String `tfsdk:"tcp_addr_id"`
	TunnelID         types.String `tfsdk:"tunnel_id"`
	EdgeID           types.String `tfsdk:"edge_id"`
	PrincipalID      types.String `tfsdk:"principal_id"`
	TunnelSessionID  types.String `tfsdk:"tunnel_session_id"`
	UpstreamURL      types.String `tfsdk:"upstream_url"`
	UpstreamProtocol types.String `tfsdk:"upstream_protocol"`
	TrafficPolicy    types.String `tfsdk:"traffic_policy"`
	Bindings         types.List   `tfsdk:"bindings"`
	PoolingEnabled   types.Bool   `tfsdk:"pooling_enabled"`
}

func endpointDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"created_at":        computedString("When the endpoint was created (RFC 3339)."),
		"updated_at":        computedString("When the endpoint last changed (RFC 3339)."),
		"region":            computedString("Region of the endpoint."),
		"url":               computedString("The endpoint's URL, e.g. `https://app.example.com` or `tcp://1.tcp.example.com:20000`."),
		"public_url":        computedString("Deprecated: the same as `url`."),
		"proto":             computedString("`http`, `https`, `tcp` or `tls`."),
		"scheme":            computedString("Scheme of the URL."),
		"host":              computedString("Host of the URL."),
		"hostport":          computedString("`host:port` of the URL."),
		"port":              schema.Int64Attribute{MarkdownDescription: "Port of the URL.", Computed: true},
		"type":              computedString("How the endpoint was made: `agent` for an agent's tunnel."),
		"metadata":          computedString("Metadata from the agent's configuration; `\"\"` when none."),
		"description":       computedString("What the endpoint is for; `\"\"` when not set."),
		"name":              computedString("Name of the endpoint; `\"\"` when not set."),
		"domain_id":         computedString("ID of the reserved domain the endpoint serves; null for an address."),
		"tcp_addr_id":       computedString("ID of the reserved TCP address the endpoint serves; null for a hostname."),
		"tunnel_id":         computedString("ID of the tunnel behind the endpoint, or null."),
		"edge_id":           computedString("ID of the edge behind the endpoint, or null."),
		"principal_id":      computedString("ID of the user or service user the endpoint belongs to, or null."),
		"tunnel_session_id": computedString("ID of the agent's tunnel session, or null."),
		"upstream_url":      computedString("Where the agent forwards the traffic."),
		"upstream_protocol": computedString("Protocol towards the upstream; `\"\"` when not set."),
		"traffic_policy":    computedString("The endpoint's traffic policy; `\"\"` when none."),
		"bindings":          computedStringList("Bindings of the endpoint: `public`, `internal` or `orchestrator`."),
		"pooling_enabled":   schema.BoolAttribute{MarkdownDescription: "Whether several agents may serve the endpoint.", Computed: true},
	}
}

func flattenEndpoint(e *api.Endpoint, m *endpointModel) {
	m.ID = types.StringValue(e.ID)
	m.CreatedAt = types.StringValue(e.CreatedAt)
	m.UpdatedAt = types.StringValue(e.UpdatedAt)
	m.Region = types.StringValue(e.Region)
	m.URL = types.StringValue(e.URL)
	m.PublicURL = types.StringValue(e.PublicURL)
	m.Proto = types.StringValue(e.Proto)
	m.Scheme = types.StringValue(e.Scheme)
	m.Host = types.StringValue(e.Host)
	m.Hostport = types.StringValue(e.Hostport)
	m.Port = types.Int64Value(int64(e.Port))
	m.Type = types.StringValue(e.Type)
	m.Metadata = types.StringValue(e.Metadata)
	m.Description = types.StringValue(e.Description)
	m.Name = types.StringValue(e.Name)
	m.DomainID = refIDOrNull(e.Domain)
	m.TCPAddrID = refIDOrNull(e.TCPAddr)
	m.TunnelID = refIDOrNull(e.Tunnel)
	m.EdgeID = refIDOrNull(e.Edge)
	m.PrincipalID = refIDOrNull(e.Principal)
	m.TunnelSessionID = refIDOrNull(e.TunnelSession)
	m.UpstreamURL = types.StringValue(e.UpstreamURL)
	m.UpstreamProtocol = types.StringValue(e.UpstreamProtocol)
	m.TrafficPolicy = types.StringValue(e.TrafficPolicy)
	m.Bindings = stringList(e.Bindings)
	m.PoolingEnabled = types.BoolValue(e.PoolingEnabled)
}

// refIDOrNull is the ID of a Ref that may be null.
func refIDOrNull(r *api.Ref) types.String {
	if r == nil {
		return types.StringNull()
	}
	return types.StringValue(r.ID)
}
