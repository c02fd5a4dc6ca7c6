package apiserver

import (
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The three edge kinds (details.md §6.10, §7.3, §12). Create and PATCH take the same body;
// an omitted member keeps its value and a module given replaces the whole module. An edge
// holds the reserved domains or addresses of its hostports as refs, so they cannot be
// deleted while it uses them (ERR_446 / ERR_215), and claims each hostport as a unique key:
// a hostport belongs to one edge (ERR_7122).

const (
	kindHTTPSEdge = "https_edge"
	kindTCPEdge   = "tcp_edge"
	kindTLSEdge   = "tls_edge"
)

var edgeText = rules.TextCodes{Description: "ERR_7073", Metadata: "ERR_7074"}

var httpsEdges = &family[api.HTTPSEdge, *api.HTTPSEdge, api.HTTPSEdgeCreate, api.HTTPSEdgeCreate]{
	kind: kindHTTPSEdge,
	def:  api.HTTPSEdges,
	create: func(c *call, tx store.Tx, in *api.HTTPSEdgeCreate, e *api.HTTPSEdge) (any, error) {
		return nil, setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	update: func(c *call, tx store.Tx, in *api.HTTPSEdgeCreate, e *api.HTTPSEdge) error {
		return setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	modules: []module[*api.HTTPSEdge]{
		mutualTLSModule(func(e *api.HTTPSEdge) **api.MutualTLSModule { return &e.MutualTLS }),
		tlsTerminationModule("https", func(e *api.HTTPSEdge) **api.TLSTerminationModule { return &e.TLSTermination }),
	},
	check: func(w *write[*api.HTTPSEdge]) error {
		return checkHostports(w.c, w.tx, "https", w.obj.Hostports, &w.refs)
	},
	unique:    func(_ string, e *api.HTTPSEdge) []string { return hostportKeys(e.Hostports) },
	duplicate: hostportTaken,
	// An HTTPS edge shows its routes in creation order; they are stored on their own.
	expand: func(c *call, tx store.Tx, e *api.HTTPSEdge) error {
		objs, err := tx.List(c.r.Context(), store.ListQuery{Kind: kindHTTPSEdgeRoute, AccountID: c.who.accountID, ParentID: e.ID})
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
}

var tcpEdges = &family[api.TCPEdge, *api.TCPEdge, api.TCPEdgeCreate, api.TCPEdgeCreate]{
	kind: kindTCPEdge,
	def:  api.TCPEdges,
	create: func(c *call, tx store.Tx, in *api.TCPEdgeCreate, e *api.TCPEdge) (any, error) {
		return nil, setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	update: func(c *call, tx store.Tx, in *api.TCPEdgeCreate, e *api.TCPEdge) error {
		return setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	modules: []module[*api.TCPEdge]{
		backendModule(func(e *api.TCPEdge) **api.BackendModule { return &e.Backend }),
		ipRestrictionModule(func(e *api.TCPEdge) **api.IPRestrictionModule { return &e.IPRestriction }),
		trafficPolicyModule(rules.PolicyOwnerTCPEdge, func(e *api.TCPEdge) **api.TrafficPolicyModule { return &e.TrafficPolicy }),
	},
	check:     func(w *write[*api.TCPEdge]) error { return checkHostports(w.c, w.tx, "tcp", w.obj.Hostports, &w.refs) },
	unique:    func(_ string, e *api.TCPEdge) []string { return hostportKeys(e.Hostports) },
	duplicate: hostportTaken,
}

var tlsEdges = &family[api.TLSEdge, *api.TLSEdge, api.TLSEdgeCreate, api.TLSEdgeCreate]{
	kind: kindTLSEdge,
	def:  api.TLSEdges,
	create: func(c *call, tx store.Tx, in *api.TLSEdgeCreate, e *api.TLSEdge) (any, error) {
		return nil, setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	update: func(c *call, tx store.Tx, in *api.TLSEdgeCreate, e *api.TLSEdge) error {
		return setEdge(in.Description, in.Metadata, in.Hostports, &e.Description, &e.Metadata, &e.Hostports)
	},
	modules: []module[*api.TLSEdge]{
		backendModule(func(e *api.TLSEdge) **api.BackendModule { return &e.Backend }),
		ipRestrictionModule(func(e *api.TLSEdge) **api.IPRestrictionModule { return &e.IPRestriction }),
		mutualTLSModule(func(e *api.TLSEdge) **api.MutualTLSModule { return &e.MutualTLS }),
		tlsTerminationModule("tls", func(e *api.TLSEdge) **api.TLSTerminationModule { return &e.TLSTermination }),
		trafficPolicyModule(rules.PolicyOwnerTLSEdge, func(e *api.TLSEdge) **api.TrafficPolicyModule { return &e.TrafficPolicy }),
	},
	check: func(w *write[*api.TLSEdge]) error {
		e := w.obj
		// Mutual TLS needs the decrypted stream (details.md §8.2).
		if e.TLSTermination != nil && e.TLSTermination.TerminateAt == "upstream" && e.MutualTLS != nil {
			return withDetail(badRequest("ERR_7062", "These modules need TLS terminated at the edge, but tls_termination.terminate_at is 'upstream': mutual_tls."), "param", "mutual_tls")
		}
		return checkHostports(w.c, w.tx, "tls", e.Hostports, &w.refs)
	},
	unique:    func(_ string, e *api.TLSEdge) []string { return hostportKeys(e.Hostports) },
	duplicate: hostportTaken,
}

// setEdge applies the members every edge kind shares: description, metadata and hostports
// (checked in form here; what they name is checked by checkHostports).
func setEdge(description, metadata *string, hostports []string, dstDescription, dstMetadata *string, dst *[]string) error {
	if err := setText(edgeText, description, metadata, dstDescription, dstMetadata); err != nil {
		return err
	}
	if hostports == nil {
		return nil
	}
	out := make([]string, len(hostports))
	for i, hp := range hostports {
		host, port, err := rules.Hostport(hp)
		if err != nil {
			return err
		}
		out[i] = host + ":" + strconv.Itoa(port)
		if slices.Contains(out[:i], out[i]) {
			return withDetail(badRequest("ERR_215", "The hostport %s is listed more than once.", rules.Quote(hp)), "param", "hostports")
		}
	}
	*dst = out
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
			addr, err := reservationOf(c, tx, addrKey(hp))
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
		if addr, err := reservationOf(c, tx, addrKey(hp)); err != nil {
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
	d, err := reservationOf(c, tx, "reserved_domain:"+host)
	if d != nil || err != nil || strings.HasPrefix(host, "*.") {
		return d, err
	}
	if _, parent, ok := strings.Cut(host, "."); ok && strings.Contains(parent, ".") {
		return reservationOf(c, tx, "reserved_domain:*."+parent)
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
	return withDetail(badRequest(code, format, rules.Quote(hostport)), "param", "hostports")
}

func hostportKeys(hostports []string) []string {
	keys := make([]string, len(hostports))
	for i, hp := range hostports {
		keys[i] = "edge.hostport:" + hp
	}
	return keys
}

// hostportTaken is ERR_7122: a hostport belongs to one edge.
func hostportTaken(c *call, tx store.Tx, dup *store.DuplicateError) error {
	hp := strings.TrimPrefix(dup.Key, "edge.hostport:")
	return withDetail(badRequest("ERR_7122", "The hostport %s is already used by another edge.", rules.Quote(hp)), "param", "hostports")
}
