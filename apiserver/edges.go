package apiserver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The three edge kinds (details.md §6.10, §7.3, §12). Create and PATCH take the same body;
// an omitted member keeps its value and a module given replaces the whole module. An edge
// holds the reserved domains or addresses of its hostports as refs, so they cannot be
// deleted while it uses them (ERR_446 / ERR_215), and claims each hostport as a unique key:
// a hostport belongs to one edge (ERR_7122).

var edgeText = rules.TextCodes{Description: "ERR_7073", Metadata: "ERR_7074"}

var httpsEdges = edgeFamily(kinds.HTTPSEdge, api.HTTPSEdges, "https",
	func(in *api.HTTPSEdgeCreate, e *api.HTTPSEdge) edgeMembers {
		return edgeMembers{in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports}
	},
	&family[api.HTTPSEdge, *api.HTTPSEdge, api.HTTPSEdgeCreate, api.HTTPSEdgeCreate]{
		modules: []module[*api.HTTPSEdge]{
			mutualTLSModule(func(e *api.HTTPSEdge) **api.MutualTLSModule { return &e.MutualTLS }),
			tlsTerminationModule("https", func(e *api.HTTPSEdge) **api.TLSTerminationModule { return &e.TLSTermination }),
		},
		// An HTTPS edge shows its routes in creation order; they are stored on their own.
		expand: func(c *call, tx store.Tx, e *api.HTTPSEdge) error {
			objs, err := tx.List(c.r.Context(), store.ListQuery{Kind: kinds.HTTPSEdgeRoute, AccountID: c.who.accountID, ParentID: e.ID})
			if err != nil {
				return err
			}
			slices.Reverse(objs)
			e.Routes = make([]api.HTTPSEdgeRoute, len(objs))
			for i, o := range objs {
				route, err := httpsEdgeRoutes.decode(o)
				if err != nil {
					return err
				}
				e.Routes[i] = *httpsEdgeRoutes.rendered(c, route, e.ID)
			}
			return nil
		},
	})

var tcpEdges = edgeFamily(kinds.TCPEdge, api.TCPEdges, "tcp",
	func(in *api.TCPEdgeCreate, e *api.TCPEdge) edgeMembers {
		return edgeMembers{in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports}
	},
	&family[api.TCPEdge, *api.TCPEdge, api.TCPEdgeCreate, api.TCPEdgeCreate]{
		modules: []module[*api.TCPEdge]{
			backendModule(func(e *api.TCPEdge) **api.BackendModule { return &e.Backend }),
			ipRestrictionModule(func(e *api.TCPEdge) **api.IPRestrictionModule { return &e.IPRestriction }),
			trafficPolicyModule(rules.PolicyOwnerTCPEdge, func(e *api.TCPEdge) **api.TrafficPolicyModule { return &e.TrafficPolicy }),
		},
	})

var tlsEdges = edgeFamily(kinds.TLSEdge, api.TLSEdges, "tls",
	func(in *api.TLSEdgeCreate, e *api.TLSEdge) edgeMembers {
		return edgeMembers{in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports}
	},
	&family[api.TLSEdge, *api.TLSEdge, api.TLSEdgeCreate, api.TLSEdgeCreate]{
		modules: []module[*api.TLSEdge]{
			backendModule(func(e *api.TLSEdge) **api.BackendModule { return &e.Backend }),
			ipRestrictionModule(func(e *api.TLSEdge) **api.IPRestrictionModule { return &e.IPRestriction }),
			mutualTLSModule(func(e *api.TLSEdge) **api.MutualTLSModule { return &e.MutualTLS }),
			tlsTerminationModule("tls", func(e *api.TLSEdge) **api.TLSTerminationModule { return &e.TLSTermination }),
			trafficPolicyModule(rules.PolicyOwnerTLSEdge, func(e *api.TLSEdge) **api.TrafficPolicyModule { return &e.TrafficPolicy }),
		},
		// Mutual TLS needs the decrypted stream (details.md §8.2).
		check: func(w *write[*api.TLSEdge]) error {
			if t := w.obj.TLSTermination; t != nil && t.TerminateAt == "upstream" && w.obj.MutualTLS != nil {
				return apierr.WithDetail(apierr.BadRequest("ERR_7062", "These modules need TLS terminated at the edge, but tls_termination.terminate_at is 'upstream': mutual_tls."), "param", "mutual_tls")
			}
			return nil
		},
	})

// edgeMembers points at the members every edge kind shares: as given in a create or PATCH
// body, and in the edge.
type edgeMembers struct {
	description, metadata       *string
	hostports                   []string
	dstDescription, dstMetadata *string
	dstHostports                *[]string
}

// edgeFamily fills in what every edge kind shares: create and PATCH apply the shared members
// (setEdge), the check adds checkHostports after the kind's own, and the hostports are the
// edge's unique keys.
func edgeFamily[T any, P interface {
	*T
	api.Object
}, C any](kind string, def *api.Family, edge string, members func(in *C, e P) edgeMembers, f *family[T, P, C, C]) *family[T, P, C, C] {
	f.kind, f.def = kind, def
	f.create = func(c *call, tx store.Tx, in *C, e P) (any, error) { return nil, setEdge(members(in, e)) }
	f.update = func(c *call, tx store.Tx, in *C, e P) error { return setEdge(members(in, e)) }
	own := f.check
	f.check = func(w *write[P]) error {
		if own != nil {
			if err := own(w); err != nil {
				return err
			}
		}
		return checkHostports(w.c, w.tx, edge, *members(new(C), w.obj).dstHostports, &w.refs)
	}
	f.unique = func(_ string, e P) []string { return hostportKeys(*members(new(C), e).dstHostports) }
	f.duplicate = hostportTaken
	return f
}

// setEdge applies the members every edge kind shares: description, metadata and hostports
// (checked in form here; what they name is checked by checkHostports).
func setEdge(m edgeMembers) error {
	if err := setText(edgeText, m.description, m.metadata, m.dstDescription, m.dstMetadata); err != nil {
		return err
	}
	if m.hostports == nil {
		return nil
	}
	out := make([]string, len(m.hostports))
	for i, hp := range m.hostports {
		host, port, err := rules.Hostport(hp)
		if err != nil {
			return err
		}
		out[i] = host + ":" + strconv.Itoa(port)
		if slices.Contains(out[:i], out[i]) {
			return apierr.WithDetail(apierr.BadRequest("ERR_215", "The hostport %s is listed more than once.", rules.Quote(hp)), "param", "hostports")
		}
	}
	*m.dstHostports = out
	return nil
}

// checkHostports checks that each hostport names what its edge kind serves (details.md §12)
// and adds the reserved domains or addresses it names to refs. HTTPS and TLS edges take
// reserved domains of the account on port 443 (a name under a wildcard reservation too);
// TCP edges take reserved addresses of the account.
func checkHostports(c *call, tx store.Tx, edge string, hostports []string, refs *[]string) error {
	for _, hp := range hostports {
		host, port, _ := strings.Cut(hp, ":")
		if edge == "tcp" {
			addr, err := reservationOf(c, tx, kinds.ReservedAddrKey(hp))
			if err != nil {
				return err
			}
			switch {
			case addr != nil && addr.AccountID != c.who.accountID:
				return hostportError("ERR_7114", hp, "The address %s is reserved by another account.")
			case addr != nil:
				*refs = append(*refs, addr.ID)
				continue
			}
			if d, err := domainOf(c, tx, host); err != nil {
				return err
			} else if d != nil && d.AccountID == c.who.accountID {
				return hostportError("ERR_7120", hp, "TCP edges take reserved addresses only; %s is a reserved domain.")
			}
			return hostportError("ERR_7113", hp, "The address %s is not reserved: reserve it first (POST /reserved_addrs).")
		}
		if addr, err := reservationOf(c, tx, kinds.ReservedAddrKey(hp)); err != nil {
			return err
		} else if addr != nil && addr.AccountID == c.who.accountID {
			code := map[string]string{"https": "ERR_7121", "tls": "ERR_7133"}[edge]
			return hostportError(code, hp, strings.ToUpper(edge)+" edges take reserved domains only; %s is a reserved TCP address.")
		}
		if port != "443" {
			return hostportError("ERR_7116", hp, "The hostport %s must use port 443.")
		}
		d, err := domainOf(c, tx, host)
		switch {
		case err != nil:
			return err
		case d == nil:
			return hostportError("ERR_7117", hp, "The domain of %s is not reserved: reserve it first (POST /reserved_domains).")
		case d.AccountID != c.who.accountID:
			return hostportError("ERR_7118", hp, "The domain of %s is reserved by another account.")
		}
		*refs = append(*refs, d.ID)
	}
	return nil
}

// domainOf finds the reservation of host: the name itself, else the wildcard of its parent
// (a.example.com under *.example.com); nil when neither is reserved.
func domainOf(c *call, tx store.Tx, host string) (*store.Object, error) {
	d, err := reservationOf(c, tx, kinds.ReservedDomainKey(host))
	if d != nil || err != nil || strings.HasPrefix(host, "*.") {
		return d, err
	}
	if _, parent, ok := strings.Cut(host, "."); ok && strings.Contains(parent, ".") {
		return reservationOf(c, tx, kinds.ReservedDomainKey("*."+parent))
	}
	return nil, nil
}

// reservationOf returns the holder of a unique key, or nil.
func reservationOf(c *call, tx store.Tx, key string) (*store.Object, error) {
	o, err := tx.Lookup(c.r.Context(), key)
	if isNotFound(err) {
		return nil, nil
	}
	return o, err
}

func hostportError(code, hostport, format string) error {
	return apierr.WithDetail(apierr.BadRequest(code, format, rules.Quote(hostport)), "param", "hostports")
}

func hostportKeys(hostports []string) []string {
	keys := make([]string, len(hostports))
	for i, hp := range hostports {
		keys[i] = kinds.EdgeHostportKey(hp)
	}
	return keys
}

// hostportTaken is ERR_7122: a hostport belongs to one edge.
func hostportTaken(c *call, tx store.Tx, dup *store.DuplicateError) error {
	hp := kinds.EdgeHostportOf(dup.Key)
	return apierr.WithDetail(apierr.BadRequest("ERR_7122", "The hostport %s is already used by another edge.", rules.Quote(hp)), "param", "hostports")
}
