package apiserver

import (
	"maps"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The five backend kinds (details.md §6.9, §7.9). They share the list member "backends",
// take no filter, and refuse deletion while another backend references them (ERR_6502).
// Create and PATCH take the same body; in a PATCH an omitted member keeps its value.

var backendPrefixes = []string{ids.FailoverBackend, ids.HTTPResponseBackend, ids.StaticBackend, ids.TunnelGroupBackend, ids.WeightedBackend}

// backendFamily fills in what every backend kind shares.
func backendFamily[T any, P interface {
	*T
	api.Object
}, C any](kind string, def *api.Family, f *family[T, P, C, C]) *family[T, P, C, C] {
	f.kind, f.def = kind, def
	f.inUse = func(c *call, obj P, referrers []*store.Object) error {
		return stillReferenced("ERR_6502", "The backend "+obj.Base().ID, referrers)
	}
	return f
}

var failoverBackends = backendFamily(kinds.FailoverBackend, api.FailoverBackends, &family[api.FailoverBackend, *api.FailoverBackend, api.FailoverBackendCreate, api.FailoverBackendCreate]{
	create: func(c *call, tx store.Tx, in *api.FailoverBackendCreate, b *api.FailoverBackend) (any, error) {
		b.Backends = []string{}
		return nil, applyFailover(c, tx, in, b)
	},
	update: func(c *call, tx store.Tx, in *api.FailoverBackendCreate, b *api.FailoverBackend) error {
		return applyFailover(c, tx, in, b)
	},
	refs: func(b *api.FailoverBackend) []string { return b.Backends },
})

func applyFailover(c *call, tx store.Tx, in *api.FailoverBackendCreate, b *api.FailoverBackend) error {
	if err := setText(rules.BackendText, in.Description, in.Metadata, &b.Description, &b.Metadata); err != nil {
		return err
	}
	if in.Backends == nil {
		return nil
	}
	if err := rules.FailoverChildren(in.Backends); err != nil {
		return err
	}
	if err := requireBackends(c, tx, b.ID, in.Backends); err != nil {
		return err
	}
	b.Backends = in.Backends
	return nil
}

var weightedBackends = backendFamily(kinds.WeightedBackend, api.WeightedBackends, &family[api.WeightedBackend, *api.WeightedBackend, api.WeightedBackendCreate, api.WeightedBackendCreate]{
	create: func(c *call, tx store.Tx, in *api.WeightedBackendCreate, b *api.WeightedBackend) (any, error) {
		b.Backends = map[string]int64{}
		return nil, applyWeighted(c, tx, in, b)
	},
	update: func(c *call, tx store.Tx, in *api.WeightedBackendCreate, b *api.WeightedBackend) error {
		return applyWeighted(c, tx, in, b)
	},
	refs: func(b *api.WeightedBackend) []string { return slices.Sorted(maps.Keys(b.Backends)) },
})

func applyWeighted(c *call, tx store.Tx, in *api.WeightedBackendCreate, b *api.WeightedBackend) error {
	if err := setText(rules.BackendText, in.Description, in.Metadata, &b.Description, &b.Metadata); err != nil {
		return err
	}
	if in.Backends == nil {
		return nil
	}
	if err := rules.Weights(in.Backends); err != nil {
		return err
	}
	if err := requireBackends(c, tx, b.ID, slices.Sorted(maps.Keys(in.Backends))); err != nil {
		return err
	}
	b.Backends = in.Backends
	return nil
}

var httpResponseBackends = backendFamily(kinds.HTTPResponseBackend, api.HTTPResponseBackends, &family[api.HTTPResponseBackend, *api.HTTPResponseBackend, api.HTTPResponseBackendCreate, api.HTTPResponseBackendCreate]{
	create: func(c *call, tx store.Tx, in *api.HTTPResponseBackendCreate, b *api.HTTPResponseBackend) (any, error) {
		b.StatusCode, b.Headers = rules.DefaultStatusCode, map[string]string{}
		return nil, applyHTTPResponse(in, b)
	},
	update: func(c *call, tx store.Tx, in *api.HTTPResponseBackendCreate, b *api.HTTPResponseBackend) error {
		return applyHTTPResponse(in, b)
	},
})

func applyHTTPResponse(in *api.HTTPResponseBackendCreate, b *api.HTTPResponseBackend) error {
	if err := setText(rules.BackendText, in.Description, in.Metadata, &b.Description, &b.Metadata); err != nil {
		return err
	}
	next := *b
	if in.Body != nil {
		next.Body = *in.Body
	}
	if in.StatusCode != nil {
		next.StatusCode = *in.StatusCode
	}
	if in.Headers != nil {
		next.Headers = in.Headers
	}
	if err := rules.HTTPResponse(next.StatusCode, next.Body, next.Headers); err != nil {
		return err
	}
	// Header names are case-insensitive; the API shows them lowercased (details.md §7.9).
	lower := make(map[string]string, len(next.Headers))
	for k, v := range next.Headers {
		lower[strings.ToLower(k)] = v
	}
	next.Headers = lower
	*b = next
	return nil
}

var staticBackends = backendFamily(kinds.StaticBackend, api.StaticBackends, &family[api.StaticBackend, *api.StaticBackend, api.StaticBackendCreate, api.StaticBackendCreate]{
	create: func(c *call, tx store.Tx, in *api.StaticBackendCreate, b *api.StaticBackend) (any, error) {
		if in.Address == nil {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_6505", "The address is required: host:port."), "param", "address")
		}
		return nil, applyStatic(in, b)
	},
	update: func(c *call, tx store.Tx, in *api.StaticBackendCreate, b *api.StaticBackend) error {
		return applyStatic(in, b)
	},
})

func applyStatic(in *api.StaticBackendCreate, b *api.StaticBackend) error {
	if err := setText(rules.BackendText, in.Description, in.Metadata, &b.Description, &b.Metadata); err != nil {
		return err
	}
	if in.Address != nil {
		if err := rules.StaticAddress(*in.Address); err != nil {
			return err
		}
		b.Address = *in.Address
	}
	if in.TLS != nil {
		b.TLS = *in.TLS
	}
	return nil
}

var tunnelGroupBackends = backendFamily(kinds.TunnelGroupBackend, api.TunnelGroupBackends, &family[api.TunnelGroupBackend, *api.TunnelGroupBackend, api.TunnelGroupBackendCreate, api.TunnelGroupBackendCreate]{
	create: func(c *call, tx store.Tx, in *api.TunnelGroupBackendCreate, b *api.TunnelGroupBackend) (any, error) {
		b.Labels = map[string]string{}
		return nil, applyTunnelGroup(in, b)
	},
	update: func(c *call, tx store.Tx, in *api.TunnelGroupBackendCreate, b *api.TunnelGroupBackend) error {
		return applyTunnelGroup(in, b)
	},
	// The tunnels of connected agents whose labels include the group's, as they stand.
	expand: func(c *call, tx store.Tx, b *api.TunnelGroupBackend) error {
		matching, err := matchingTunnels(c, tx, b.Labels)
		b.Tunnels = c.refList(matching)
		return err
	},
	render: func(c *call, b *api.TunnelGroupBackend) {
		if b.Tunnels == nil {
			b.Tunnels = []api.Ref{}
		}
	},
})

func applyTunnelGroup(in *api.TunnelGroupBackendCreate, b *api.TunnelGroupBackend) error {
	if err := setText(rules.BackendText, in.Description, in.Metadata, &b.Description, &b.Metadata); err != nil {
		return err
	}
	if in.Labels == nil {
		return nil
	}
	if err := rules.Labels(in.Labels); err != nil {
		return err
	}
	b.Labels = in.Labels
	return nil
}

// requireBackends checks the children of a weighted or failover backend: each a backend of
// the account (requireBackend), never the backend itself.
func requireBackends(c *call, tx store.Tx, self string, children []string) error {
	for _, id := range children {
		if id == self {
			return apierr.WithDetail(apierr.BadRequest("ERR_215", "A backend cannot reference itself."), "param", "backends")
		}
		if err := requireBackend(c, tx, id, "backends"); err != nil {
			return err
		}
	}
	return nil
}

// requireBackend checks a backend reference: a backend ID (ERR_6526) of an existing backend
// of the account (ERR_6501). param names the member in the error.
func requireBackend(c *call, tx store.Tx, id, param string) error {
	if !slices.Contains(backendPrefixes, prefixOf(id)) {
		return apierr.WithDetail(apierr.BadRequest("ERR_6526", "%s is not a backend ID.", rules.Quote(id)), "param", param)
	}
	if _, err := c.lookup(tx, id, backendPrefixes...); isNotFound(err) {
		return apierr.WithDetail(apierr.BadRequest("ERR_6501", "The backend %s does not exist.", rules.Quote(id)), "param", param)
	} else if err != nil {
		return err
	}
	return nil
}
