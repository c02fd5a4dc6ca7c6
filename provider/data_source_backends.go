package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// The backend lists of the API take no filter.

// failoverBackendDataSources are data.warren_failover_backend and data.warren_failover_backends.
var failoverBackendDataSources = dataSources[api.FailoverBackend, failoverBackendModel]{
	name:        "failover_backend",
	plural:      "failover_backends",
	describeOne: "Reads a failover backend by ID.",
	describeAll: "Lists the account's failover backends.",
	attributes: func() map[string]schema.Attribute {
		return backendDataAttributes(map[string]schema.Attribute{"backends": computedStringList("Backend IDs in order of preference.")})
	},
	flatten:    flattenFailoverBackend,
	unfiltered: true,
}

// weightedBackendDataSources are data.warren_weighted_backend and data.warren_weighted_backends.
var weightedBackendDataSources = dataSources[api.WeightedBackend, weightedBackendModel]{
	name:        "weighted_backend",
	plural:      "weighted_backends",
	describeOne: "Reads a weighted backend by ID.",
	describeAll: "Lists the account's weighted backends.",
	attributes: func() map[string]schema.Attribute {
		return backendDataAttributes(map[string]schema.Attribute{"backends": weightsAttribute()})
	},
	flatten:    flattenWeightedBackend,
	unfiltered: true,
}

// staticBackendDataSources are data.warren_static_backend and data.warren_static_backends.
var staticBackendDataSources = dataSources[api.StaticBackend, staticBackendModel]{
	name:        "static_backend",
	plural:      "static_backends",
	describeOne: "Reads a static backend by ID.",
	describeAll: "Lists the account's static backends.",
	attributes:  staticBackendDataAttributes,
	flatten:     flattenStaticBackend,
	unfiltered:  true,
}

// httpResponseBackendDataSources are data.warren_http_response_backend and data.warren_http_response_backends.
var httpResponseBackendDataSources = dataSources[api.HTTPResponseBackend, httpResponseBackendModel]{
	name:        "http_response_backend",
	plural:      "http_response_backends",
	describeOne: "Reads an HTTP response backend by ID.",
	describeAll: "Lists the account's HTTP response backends.",
	attributes:  httpResponseBackendDataAttributes,
	flatten:     flattenHTTPResponseBackend,
	unfiltered:  true,
}

// tunnelGroupBackendDataSources are data.warren_tunnel_group_backend and data.warren_tunnel_group_backends.
var tunnelGroupBackendDataSources = dataSources[api.TunnelGroupBackend, tunnelGroupBackendDataModel]{
	name:        "tunnel_group_backend",
	plural:      "tunnel_group_backends",
	describeOne: "Reads a tunnel group backend by ID.",
	describeAll: "Lists the account's tunnel group backends.",
	attributes:  tunnelGroupBackendDataAttributes,
	flatten:     flattenTunnelGroupBackendData,
	unfiltered:  true,
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
		"tunnels": computedStringList("IDs of the tunnels of connected agents whose labels include the backend's, as they stand when read."),
	})
}
