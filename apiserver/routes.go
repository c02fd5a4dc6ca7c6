package apiserver

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
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
	mux := &router{ServeMux: http.NewServeMux()}
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

	mux.Handle("POST /_admin/accounts", s.adminRoute(s.adminCreateAccount))
	mux.Handle("POST /_admin/accounts/{account_id}/users", s.adminRoute(s.adminCreateUser))
	mux.Handle("GET /_admin/events", s.adminRoute(s.adminEvents))
	mux.Handle("GET /_admin/deliveries", s.adminRoute(s.adminDeliveries))
	mux.Handle("GET /healthz", http.HandlerFunc(s.healthz))
	mux.Handle("GET /readyz", http.HandlerFunc(s.readyz))
	mux.Handle("GET /metrics", s.metricsHandler())
	mux.Handle("GET "+agentproto.Path, http.HandlerFunc(s.agentConnect))
	s.patterns = mux.patterns

	// Unknown paths and known paths with the wrong method get the same 404 (details.md §5.1).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { callOf(r).writeError(pathNotFound(r)) })
	return s.outer(s.cleanPaths(s.cors(mux.ServeMux, mux.ServeMux)))
}

// router is the server's mux that also remembers the patterns registered on it.
type router struct {
	*http.ServeMux
	patterns []string
}

// Handle registers an API route. The request's call remembers the route's pattern, for the
// metrics (a bounded label, unlike the path with its IDs).
func (r *router) Handle(pattern string, h http.Handler) {
	r.ServeMux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		callOf(req).pattern = pattern
		h.ServeHTTP(w, req)
	}))
	r.patterns = append(r.patterns, pattern)
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
	err := s.opts.Store.Read(r.Context(), func(tx store.Tx) error {
		_, err := tx.Count(r.Context(), kindAccount, "")
		return err
	})
	if err != nil {
		c.writeError(err)
		return
	}
	_ = c.writeJSON(http.StatusOK, map[string]string{"status": "ok"})
}
