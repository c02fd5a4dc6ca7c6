package apiserver

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// routed is a family that adds its endpoints to the route table.
type routed interface {
	register(s *Server, mux *router)
	collection() collection
}

// collection is where the objects of one ID prefix live: their store kind and family.
type collection struct {
	kind   string
	def    *api.Family
	filter filter.Fields // its list's filterable fields; nil when the list takes no filter
}

// families is every family the server serves; the route table is built from it.
var families = []routed{
	apiKeys, credentials, sshCredentials, sshCAs, serviceUsers, botUsers,
	tlsCertificates, certificateAuthorities, reservedDomains, reservedAddrs,
	ipPolicies, ipPolicyRules, ipRestrictions,
	failoverBackends, httpResponseBackends, staticBackends, tunnelGroupBackends, weightedBackends,
	httpsEdges, tcpEdges, tlsEdges, httpsEdgeRoutes,
	eventDestinations, eventSubscriptions, orchestratorOperators,
	tunnelSessions, tunnels, endpoints,
}

// FilterList is a list that takes a filter: its path, the store kind of its objects and its
// filterable fields.
type FilterList struct {
	Path, Kind string
	Fields     filter.Fields
}

// FilterLists returns every list that takes a filter: for the tests of the filters'
// translation to SQL, and for make bench.
func FilterLists() []FilterList {
	var out []FilterList
	for _, f := range families {
		if c := f.collection(); c.filter != nil {
			out = append(out, FilterList{Path: c.def.Path, Kind: c.kind, Fields: c.filter})
		}
	}
	return out
}

// routes is the one route table of the server (testdata/routes.txt lists it). Each family
// registers its endpoints (family.register).
func (s *Server) routes() http.Handler {
	mux := &router{mux: http.NewServeMux(), s: s}
	s.collections = map[string]collection{}
	s.children = map[*api.Family][]collection{}
	for _, f := range families {
		f.register(s, mux)
		coll := f.collection()
		if _, seen := s.collections[coll.def.Prefix]; !seen {
			s.collections[coll.def.Prefix] = coll // /service_users before /bot_users
		}
		if coll.def.Parent != nil {
			s.children[coll.def.Parent] = append(s.children[coll.def.Parent], coll)
		}
	}

	s.registerTraffic(mux)

	mux.admin("POST /_admin/accounts", op{in: typeOf[api.AdminAccountCreate](), out: typeOf[api.AdminGrant](), status: created}, s.adminCreateAccount)
	mux.admin("POST /_admin/accounts/{account_id}/users", op{in: typeOf[api.AdminUserCreate](), out: typeOf[api.AdminGrant](), status: created}, s.adminCreateUser)
	mux.admin("GET /_admin/accounts", op{out: typeOf[api.Account](), list: "accounts"}, s.adminAccounts)
	mux.admin("GET /_admin/accounts/{account_id}", op{out: typeOf[api.Account]()}, s.adminGetAccount)
	mux.admin("DELETE /_admin/accounts/{account_id}", op{status: noContent}, s.adminDeleteAccount)
	mux.admin("POST /_admin/accounts/{account_id}/disable", op{in: typeOf[struct{}](), out: typeOf[api.Account]()}, s.adminDisableAccount)
	mux.admin("POST /_admin/accounts/{account_id}/enable", op{in: typeOf[struct{}](), out: typeOf[api.Account]()}, s.adminEnableAccount)
	mux.admin("GET /_admin/accounts/{account_id}/users", op{out: typeOf[api.User](), list: "users"}, s.adminAccountUsers)
	mux.admin("GET /_admin/events", op{out: typeOf[api.Event](), list: "events", query: []string{"account_id"}}, s.adminEvents)
	mux.admin("GET /_admin/deliveries", op{out: typeOf[api.AdminDelivery](), list: "deliveries", query: []string{"account_id", "destination_id", "event_id", "state"}}, s.adminDeliveries)
	status := typeOf[map[string]string]()
	mux.add("GET /healthz", authNone, op{out: status}, http.HandlerFunc(s.healthz))
	mux.add("GET /readyz", authNone, op{out: status, status: []int{http.StatusOK, http.StatusServiceUnavailable}}, http.HandlerFunc(s.readyz))
	mux.add("GET /metrics", authNone, op{contentType: "text/plain"}, s.metricsHandler())
	mux.add("GET "+openAPIPath, authNone, op{out: typeOf[map[string]any]()}, http.HandlerFunc(s.serveOpenAPI))
	mux.add("GET "+agentproto.Path, authAgent, op{status: []int{http.StatusSwitchingProtocols}}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.agents.ServeHTTP(w, r) }))
	saml := http.HandlerFunc(s.serveSAML)
	mux.add("GET /saml/{route_id}", authNone, op{contentType: "application/samlmetadata+xml"}, saml)
	mux.add("POST /saml/{route_id}/acs", authNone, op{status: []int{http.StatusSeeOther}}, saml)
	mux.add("GET /saml/{route_id}/slo", authNone, op{contentType: "text/html"}, saml)
	mux.add("POST /saml/{route_id}/slo", authNone, op{contentType: "text/html"}, saml)
	s.patterns, s.ops = mux.patterns, mux.ops

	// Unknown paths and known paths with the wrong method get the same 404 (details.md §5.1).
	mux.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { callOf(r).writeError(pathNotFound(r)) })
	return s.outer(s.cleanPaths(s.cors(mux.mux, mux.mux)))
}

// router is the server's mux that also remembers the routes registered on it, with what
// the OpenAPI document says of each (openapi.go).
type router struct {
	mux      *http.ServeMux
	s        *Server
	patterns []string
	ops      map[string]routeOp
}

// api registers a route of the public API (apiRoute: version, authentication, rate limit).
func (r *router) api(pattern string, o op, h handlerFunc) {
	r.add(pattern, authAPI, o, r.s.apiRoute(o, h))
}

// admin registers an operator route (adminRoute: the admin token).
func (r *router) admin(pattern string, o op, h handlerFunc) {
	r.add(pattern, authAdmin, o, r.s.adminRoute(h))
}

// add registers a route. The request's call remembers the route's pattern, for the metrics
// (a bounded label, unlike the path with its IDs).
func (r *router) add(pattern string, auth authKind, o op, h http.Handler) {
	r.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		callOf(req).pattern = pattern
		h.ServeHTTP(w, req)
	}))
	r.patterns = append(r.patterns, pattern)
	if r.ops == nil {
		r.ops = map[string]routeOp{}
	}
	r.ops[pattern] = routeOp{op: o, auth: auth}
}

// Routes returns every route pattern the server serves ("METHOD /path/{id}"), sorted by
// path then method: the API at a glance.
func (s *Server) Routes() []string {
	out := slices.Clone(s.patterns)
	slices.SortFunc(out, func(a, b string) int {
		ma, pa, _ := strings.Cut(a, " ")
		mb, pb, _ := strings.Cut(b, " ")
		return cmp.Or(strings.Compare(pa, pb), strings.Compare(ma, mb))
	})
	return out
}

// healthz answers 200 while the store answers.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	c := callOf(r)
	err := c.read(func(tx store.Tx) error {
		_, err := tx.Count(r.Context(), kinds.Account, "")
		return err
	})
	if err != nil {
		c.writeError(err)
		return
	}
	_ = c.writeJSON(http.StatusOK, map[string]string{"status": "ok"})
}
