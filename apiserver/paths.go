package apiserver

import (
	"net/http"
	"path"
	"strings"
)

// cleanPaths answers a request whose path is not in canonical form (`//x`, `/x/`, `/./`,
// `/../`, and their percent-encoded spellings such as `%2e%2e`) with the API's JSON 404
// before the mux sees it: ServeMux would answer with a 301/307 redirect to the cleaned path,
// which is no part of the API and would let one object answer under many paths.
func (s *Server) cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonicalPath(r.URL.Path) {
			callOf(r).writeError(pathNotFound(r))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// canonicalPath reports whether p (decoded) is absolute, without empty, "." or ".."
// segments and without a trailing slash; "/" itself is canonical.
func canonicalPath(p string) bool {
	return p == "/" || strings.HasPrefix(p, "/") && path.Clean(p) == p
}
