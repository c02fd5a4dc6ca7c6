package apiserver

import (
	"net/http"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// routed is a family that adds its endpoints to the route table.
type routed interface {
	register(s *Server, mux *http.ServeMux)
	collection() collection
}

// collection is where the objects of one ID prefix live.
type collection struct{ prefix, kind, path string }

// routes is the one route table of the server. Each family registers
// POST/GET <path>, GET/PATCH/DELETE <path>/{id}.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.collections = map[string]collection{}
	for _, f := range []routed{
		apiKeys, credentials, sshCredentials, sshCAs, serviceUsers, botUsers,
		tlsCertificates, certificateAuthorities, reservedDomains, reservedAddrs,
		ipPolicies, ipPolicyRules, ipRestrictions,
		failoverBackends, httpResponseBackends, staticBackends, tunnelGroupBackends, weightedBackends,
	} {
		f.register(s, mux)
		if _, seen := s.collections[f.collection().prefix]; !seen {
			s.collections[f.collection().prefix] = f.collection() // /service_users before /bot_users
		}
	}

	mux.Handle("POST /_admin/accounts", s.adminRoute(s.adminCreateAccount))
	mux.Handle("POST /_admin/accounts/{account_id}/users", s.adminRoute(s.adminCreateUser))
	mux.HandleFunc("GET /healthz", s.healthz)

	// Unknown paths and known paths with the wrong method get the same 404 (details.md §5.1).
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { callOf(r).writeError(pathNotFound(r)) })
	return s.outer(s.cleanPaths(s.cors(mux, mux)))
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
