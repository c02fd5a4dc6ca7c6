package edge

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// httpsEdge is an HTTPS edge compiled: TLS terminated with the names' certificates (its
// tls_termination and mutual_tls modules), then the first route that matches the path.
type httpsEdge struct {
	compiled
	hosts  []string
	tls    tlsModules
	routes []*route // in match order (byRouteOrder)
	auth   *route   // the route with an authentication module (one per edge): it serves session.PathPrefix
}

// route is an HTTPS edge route compiled: its match, its modules' pipeline (pipeline.go)
// and its backend.
type route struct {
	compiled
	exact    bool
	match    string
	auth     bool   // an authentication module (oauth, oidc, saml) is enabled
	notYet   string // an enabled module this server does not enforce: traffic refused
	pipeline pipeline
	backend  backend // nil: no backend module, or disabled
}

func (c *compiler) httpsEdge(o *store.Object, routes []*store.Object) *httpsEdge {
	e := &httpsEdge{compiled: compiled{id: o.ID, accountID: o.AccountID}}
	var doc api.HTTPSEdge
	if e.err = json.Unmarshal(o.Doc, &doc); e.err == nil {
		e.hosts = hostsOf(doc.Hostports)
		e.tls, e.err = c.tlsModules(o.AccountID, doc.TLSTermination, doc.MutualTLS)
	}
	if e.err != nil {
		c.logErr(o.Kind, o.ID, e.err)
	}
	for _, ro := range routes {
		e.routes = append(e.routes, c.route(ro))
	}
	slices.SortFunc(e.routes, byRouteOrder)
	if i := slices.IndexFunc(e.routes, func(r *route) bool { return r.auth }); i >= 0 {
		e.auth = e.routes[i]
	}
	return e
}

func (c *compiler) route(o *store.Object) *route {
	r := &route{compiled: compiled{id: o.ID, accountID: o.AccountID}}
	var doc api.HTTPSEdgeRoute
	err := json.Unmarshal(o.Doc, &doc)
	if err == nil {
		r.exact, r.match = doc.MatchType == "exact_path", doc.Match
		r.auth = doc.OAuth != nil && doc.OAuth.Enabled || doc.OIDC != nil && doc.OIDC.Enabled || doc.SAML != nil && doc.SAML.Enabled
		r.notYet = routeNotYet(&doc)
		if err = c.routePipeline(&r.pipeline, o.AccountID, &doc); err == nil {
			r.backend, err = c.backendModule(o.AccountID, doc.Backend)
		}
	}
	if err != nil {
		r.err = err
		c.logErr(o.Kind, o.ID, err)
	}
	return r
}

// matches: an exact_path route matches its path only; a path_prefix route every path that
// starts with its match (a plain string prefix, as ngrok's: "/api" matches "/apis" too).
func (r *route) matches(path string) bool {
	if r.exact {
		return path == r.match
	}
	return strings.HasPrefix(path, r.match)
}

// serveHTTPSEdge routes a request of an HTTPS edge and applies the route's modules.
func (e *Edge) serveHTTPSEdge(w http.ResponseWriter, r *http.Request, s *Snapshot, edge *httpsEdge, v *visit) {
	v.edgeID = edge.id
	switch {
	case edge.err != nil:
		e.page(w, v, http.StatusInternalServerError, errConfig, "The edge %s cannot serve: its configuration does not compile.", edge.id)
		return
	case edge.tls.clientCAs != nil && len(r.TLS.VerifiedChains) == 0:
		// The connection began before mutual TLS was turned on.
		e.page(w, v, http.StatusForbidden, errClientCert, "A client certificate is required.")
		return
	case !e.endpointsAllowed(s, edge.accountID, v.client.Addr()):
		e.page(w, v, http.StatusForbidden, errIPRestricted, "The address %s is not allowed.", v.client.Addr())
		return
	}
	rt := edge.routeFor(r.URL.Path)
	if rt == nil {
		e.page(w, v, http.StatusNotFound, errNoRoute, "No route of this edge matches the path.")
		return
	}
	v.routeID = rt.id
	switch {
	case rt.err != nil:
		e.page(w, v, http.StatusInternalServerError, errConfig, "The route %s cannot serve: its configuration does not compile.", rt.id)
	case rt.notYet != "":
		e.page(w, v, http.StatusNotImplemented, errModuleNotYet, "The route enables the %s module, which this server does not enforce yet: its traffic is refused.", rt.notYet)
	default:
		rt.pipeline.run(w, r, &exchange{e: e, v: v}, rt.serveBackend)
	}
}

// routeFor is the route that serves path: the authentication route for the reserved
// paths (its login callback and logout, whatever its match), else the first that matches.
func (edge *httpsEdge) routeFor(path string) *route {
	if edge.auth != nil && strings.HasPrefix(path, session.PathPrefix) {
		return edge.auth
	}
	i := slices.IndexFunc(edge.routes, func(rt *route) bool { return rt.matches(path) })
	if i < 0 {
		return nil
	}
	return edge.routes[i]
}

// serveBackend is the end of a route's request phase: its backend.
func (rt *route) serveBackend(w http.ResponseWriter, r *http.Request, x *exchange) {
	if rt.backend == nil {
		x.refuse(w, http.StatusServiceUnavailable, errNoBackend, "The route has no backend.")
		return
	}
	x.e.proxy(w, r, x.v, rt.backend.plan(x.e.planner()), &rt.pipeline)
}

// routePipeline compiles the modules of a route into its pipeline, in the order
// pipeline.go gives.
func (c *compiler) routePipeline(p *pipeline, account string, doc *api.HTTPSEdgeRoute) error {
	ips, err := c.ipRestriction(account, doc.IPRestriction)
	if err != nil {
		return err
	}
	p.add(ips)
	saml, err := c.compileSAML(account, doc)
	if err != nil {
		return err
	}
	p.add(saml)
	if h := compileHeaders(doc.RequestHeaders); h != nil {
		p.add(requestHeaders{h})
	}
	if h := compileHeaders(doc.ResponseHeaders); h != nil {
		p.addResponse(responseHeaders{h})
	}
	return nil
}
