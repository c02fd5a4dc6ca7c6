package edge

import (
	"encoding/json"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"math/rand/v2"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// backend is a compiled backend: it expands, for one visitor connection or request, into the
// upstreams to try in order (a connection that fails goes to the next).
type backend interface {
	plan(p *planner) []upstream
}

// upstream is one place traffic may go: a tunnel, a static address, or a fixed response.
type upstream struct {
	tunnel   *Tunnel
	static   *staticBackend
	response *httpResponseBackend
}

// planner expands backends for one visitor: it asks Tunnels for the tunnels online now.
type planner struct {
	tunnels Tunnels
	rand    *rand.Rand
}

// maxBackendDepth bounds the nesting of weighted and failover backends (the API refuses
// cycles; this keeps a stored one from looping).
const maxBackendDepth = 8

// backendModule compiles a backend module; nil when off.
func (c *compiler) backendModule(account string, m *api.BackendModule) (backend, error) {
	if m == nil || !m.Enabled {
		return nil, nil
	}
	return c.backend(account, m.Backend.ID, 0)
}

// backend compiles the stored backend id of account.
func (c *compiler) backend(account, id string, depth int) (backend, error) {
	if depth > maxBackendDepth {
		return nil, fmt.Errorf("backend %s: nested more than %d deep", id, maxBackendDepth)
	}
	o, ok := c.objs.byID[id]
	if !ok || o.AccountID != account {
		return nil, fmt.Errorf("backend %s is not stored", id)
	}
	switch o.Kind {
	case kinds.TunnelGroupBackend:
		var b api.TunnelGroupBackend
		if err := json.Unmarshal(o.Doc, &b); err != nil {
			return nil, err
		}
		return &tunnelGroupBackend{accountID: account, labels: b.Labels}, nil
	case kinds.WeightedBackend:
		var b api.WeightedBackend
		if err := json.Unmarshal(o.Doc, &b); err != nil {
			return nil, err
		}
		return c.weighted(account, &b, depth)
	case kinds.FailoverBackend:
		var b api.FailoverBackend
		if err := json.Unmarshal(o.Doc, &b); err != nil {
			return nil, err
		}
		f := &failoverBackend{}
		for _, child := range b.Backends {
			cb, err := c.backend(account, child, depth+1)
			if err != nil {
				return nil, err
			}
			f.backends = append(f.backends, cb)
		}
		return f, nil
	case kinds.StaticBackend:
		var b api.StaticBackend
		if err := json.Unmarshal(o.Doc, &b); err != nil {
			return nil, err
		}
		return &staticBackend{addr: b.Address, tls: b.TLS.Enabled}, nil
	case kinds.HTTPResponseBackend:
		var b api.HTTPResponseBackend
		if err := json.Unmarshal(o.Doc, &b); err != nil {
			return nil, err
		}
		return compileHTTPResponse(&b), nil
	}
	return nil, fmt.Errorf("%s is a %s, not a backend", id, o.Kind)
}
