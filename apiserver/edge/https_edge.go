package edge

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge/session"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/trafficpolicy"
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
	notYet   string // a traffic policy action this server does not run: traffic refused
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
		err = kinds.RevealRouteSecrets(&doc, o.Secret)
	}
	if err == nil {
		doc.ID = o.ID
		r.exact, r.match = doc.MatchType == "exact_path", doc.Match
		r.auth = doc.OAuth != nil && doc.OAuth.Enabled || doc.OIDC != nil && doc.OIDC.Enabled || doc.SAML != nil && doc.SAML.Enabled
		if err = c.routePipeline(r, o.AccountID, &doc); err == nil {
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
	v.edgeID, v.account = edge.id, edge.accountID
	switch {
	case s.accountDisabled(edge.accountID):
		e.page(w, v, http.StatusForbidden, errAccountDisabled, "The account that serves this host is disabled.")
		return
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
		e.page(w, v, http.StatusNotImplemented, errModuleNotYet, "The route's %s is not run by this server: its traffic is refused rather than served without it.", rt.notYet)
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
	x.e.proxy(w, r, x, rt.backend.plan(x.e.planner()), &rt.pipeline)
}

// routePipeline compiles the modules of a route into its pipeline, in the order
// pipeline.go gives.
func (c *compiler) routePipeline(r *route, account string, doc *api.HTTPSEdgeRoute) error {
	p := &r.pipeline
	p.add(compressionModule(doc.Compression))
	ips, err := c.ipRestriction(account, doc.IPRestriction)
	if err != nil {
		return err
	}
	p.add(ips)
	uaf, err := userAgentFilterModule(doc.UserAgentFilter)
	if err != nil {
		return err
	}
	p.add(uaf)
	policy, notYet, err := c.trafficPolicy(rules.PolicyOwnerHTTPSRoute, r.id, doc.TrafficPolicy)
	if err != nil {
		return err
	}
	if r.notYet == "" {
		r.notYet = notYet
	}
	if policy.has(trafficpolicy.PhaseHTTPRequest) {
		p.add(policyRequest{policy})
	}
	verify, err := c.webhookVerification(doc)
	if err != nil {
		return err
	}
	p.add(verify)
	p.add(compileOAuth(doc.ID, doc.Match, doc.OAuth))
	p.add(compileOIDC(doc.ID, doc.Match, doc.OIDC))
	saml, err := c.compileSAML(account, doc)
	if err != nil {
		return err
	}
	p.add(saml)
	if h := compileHeaders(doc.RequestHeaders); h != nil {
		p.add(requestHeaders{h})
	}
	p.add(c.circuitBreaker(doc))
	p.add(c.websocketConverterModule(account, doc))
	if h := compileHeaders(doc.ResponseHeaders); h != nil {
		p.addResponse(responseHeaders{h})
	}
	if policy.has(trafficpolicy.PhaseHTTPResponse) {
		p.addResponse(policyResponse{policy})
	}
	return nil
}
