package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The backend lists of the API take no filter.

// NewFailoverBackendDataSource is data.warren_failover_backend.
func NewFailoverBackendDataSource() datasource.DataSource {
	return &objectDataSource[api.FailoverBackend, failoverBackendModel]{
		typeName: "_failover_backend", description: "Reads a failover backend by ID.",
		attributes: backendDataAttributes(map[string]schema.Attribute{"backends": computedStringList("Backend IDs in order of preference.")}),
		get:        func(c *client.Client) getFunc[api.FailoverBackend] { return c.FailoverBackends.Get },
		flatten:    flattenFailoverBackend,
	}
}

// NewFailoverBackendsDataSource is data.warren_failover_backends.
func NewFailoverBackendsDataSource() datasource.DataSource {
	return &listDataSource[api.FailoverBackend, failoverBackendModel]{
		typeName: "_failover_backends", member: "failover_backends", unfiltered: true,
		description: "Lists the account's failover backends.",
		attributes:  withID(backendDataAttributes(map[string]schema.Attribute{"backends": computedStringList("Backend IDs in order of preference.")})),
		list:        func(c *client.Client) listFunc[api.FailoverBackend] { return c.FailoverBackends.List },
		flatten:     flattenFailoverBackend,
	}
}

// NewWeightedBackendDataSource is data.warren_weighted_backend.
func NewWeightedBackendDataSource() datasource.DataSource {
	return &objectDataSource[api.WeightedBackend, weightedBackendModel]{
		typeName: "_weighted_backend", description: "Reads a weighted backend by ID.",
		attributes: backendDataAttributes(map[string]schema.Attribute{"backends": weightsAttribute()}),
		get:        func(c *client.Client) getFunc[api.WeightedBackend] { return c.WeightedBackends.Get },
		flatten:    flattenWeightedBackend,
	}
}

// NewWeightedBackendsDataSource is data.warren_weighted_backends.
func NewWeightedBackendsDataSource() datasource.DataSource {
	return &listDataSource[api.WeightedBackend, weightedBackendModel]{
		typeName: "_weighted_backends", member: "weighted_backends", unfiltered: true,
		description: "Lists the account's weighted backends.",
		attributes:  withID(backendDataAttributes(map[string]schema.Attribute{"backends": weightsAttribute()})),
		list:        func(c *client.Client) listFunc[api.WeightedBackend] { return c.WeightedBackends.List },
		flatten:     flattenWeightedBackend,
	}
}

// NewStaticBackendDataSource is data.warren_static_backend.
func NewStaticBackendDataSource() datasource.DataSource {
	return &objectDataSource[api.StaticBackend, staticBackendModel]{
		typeName: "_static_backend", description: "Reads a static backend by ID.",
		attributes: staticBackendDataAttributes(),
		get:        func(c *client.Client) getFunc[api.StaticBackend] { return c.StaticBackends.Get },
		flatten:    flattenStaticBackend,
	}
}

// NewStaticBackendsDataSource is data.warren_static_backends.
func NewStaticBackendsDataSource() datasource.DataSource {
	return &listDataSource[api.StaticBackend, staticBackendModel]{
		typeName: "_static_backends", member: "static_backends", unfiltered: true,
		description: "Lists the account's static backends.",
		attributes:  withID(staticBackendDataAttributes()),
		list:        func(c *client.Client) listFunc[api.StaticBackend] { return c.StaticBackends.List },
		flatten:     flattenStaticBackend,
	}
}

// NewHTTPResponseBackendDataSource is data.warren_http_response_backend.
func NewHTTPResponseBackendDataSource() datasource.DataSource {
	return &objectDataSource[api.HTTPResponseBackend, httpResponseBackendModel]{
		typeName: "_http_response_backend", description: "Reads an HTTP response backend by ID.",
		attributes: httpResponseBackendDataAttributes(),
		get:        func(c *client.Client) getFunc[api.HTTPResponseBackend] { return c.HTTPResponseBackends.Get },
		flatten:    flattenHTTPResponseBackend,
	}
}

// NewHTTPResponseBackendsDataSource is data.warren_http_response_backends.
func NewHTTPResponseBackendsDataSource() datasource.DataSource {
	return &listDataSource[api.HTTPResponseBackend, httpResponseBackendModel]{
		typeName: "_http_response_backends", member: "http_response_backends", unfiltered: true,
		description: "Lists the account's HTTP response backends.",
		attributes:  withID(httpResponseBackendDataAttributes()),
		list:        func(c *client.Client) listFunc[api.HTTPResponseBackend] { return c.HTTPResponseBackends.List },
		flatten:     flattenHTTPResponseBackend,
	}
}

// NewTunnelGroupBackendDataSource is data.warren_tunnel_group_backend.
func NewTunnelGroupBackendDataSource() datasource.DataSource {
	return &objectDataSource[api.TunnelGroupBackend, tunnelGroupBackendModel]{
		typeName: "_tunnel_group_backend", description: "Reads a tunnel group backend by ID.",
		attributes: tunnelGroupBackendDataAttributes(),
		get:        func(c *client.Client) getFunc[api.TunnelGroupBackend] { return c.TunnelGroupBackends.Get },
		flatten:    flattenTunnelGroupBackend,
	}
}

// NewTunnelGroupBackendsDataSource is data.warren_tunnel_group_backends.
func NewTunnelGroupBackendsDataSource() datasource.DataSource {
	return &listDataSource[api.TunnelGroupBackend, tunnelGroupBackendModel]{
		typeName: "_tunnel_group_backends", member: "tunnel_group_backends", unfiltered: true,
		description: "Lists the account's tunnel group backends.",
		attributes:  withID(tunnelGroupBackendDataAttributes()),
		list:        func(c *client.Client) listFunc[api.TunnelGroupBackend] { return c.TunnelGroupBackends.List },
		flatten:     flattenTunnelGroupBackend,
	}
}

// backendDataAttributes are the attributes every backend shows plus the kind's own.
func backendDataAttributes(own map[string]schema.Attribute) map[string]schema.Attribute {
	own["description"] = computedString("What the backend is for.")
	own["metadata"] = computedString("Arbitrary user data.")
	own["created_at"] = computedString("When the backend was created (RFC 3339).")
	return own
}

func weightsAttribute() schema.MapAttribute {
	return schema.MapAttribute{MarkdownDescription: "Backend ID → weight.", Computed: true, ElementType: types.Int64Type}
}

func staticBackendDataAttributes() map[string]schema.Attribute {
	return backendDataAttributes(map[string]schema.Attribute{
		"address": computedString("Where traffic goes, `host:port`."),
		"tls": schema.SingleNestedAttribute{MarkdownDescription: "TLS towards the address.", Computed: true,
			Attributes: map[string]schema.Attribute{"enabled": schema.BoolAttribute{MarkdownDescription: "Whether TLS is used.", Computed: true}}},
	})
}

func httpResponseBackendDataAttributes() map[string]schema.Attribute {
	return backendDataAttributes(map[string]schema.Attribute{
		"body":        computedString("The response body."),
		"headers":     schema.MapAttribute{MarkdownDescription: "Response headers.", Computed: true, ElementType: types.StringType},
		"status_code": schema.Int64Attribute{MarkdownDescription: "The HTTP status code.", Computed: true},
	})
}

func tunnelGroupBackendDataAttributes() map[string]schema.Attribute {
	return backendDataAttributes(map[string]schema.Attribute{
		"labels":  schema.MapAttribute{MarkdownDescription: "Labels a tunnel must carry.", Computed: true, ElementType: types.StringType},
		"tunnels": computedStringList("IDs of the tunnels that currently match."),
	})
}
