package apiserver

import (
	"net/http"
)

// SetSAMLHandler mounts the edge's SAML service provider (edge.Edge.SAMLHandler) under
// /saml/: the saml module's entity ID and metadata URL /saml/{route_id}, its assertion
// consumer service …/acs and single logout URL …/slo are the API's base URL (details.md
// §8.6). The server may start before the edge: until then, and on a server without an
// edge, those paths are not found.
func (s *Server) SetSAMLHandler(h http.Handler) { s.saml.Store(&h) }

// serveSAML hands a /saml/ request to the edge's handler.
func (s *Server) serveSAML(w http.ResponseWriter, r *http.Request) {
	h := s.saml.Load()
	if h == nil {
		callOf(r).writeError(pathNotFound(r))
		return
	}
	(*h).ServeHTTP(w, r)
}
