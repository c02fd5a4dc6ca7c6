package apiserver

import (
	"net/http"
	"strings"
)

// corsMethods are the methods a preflight may ask about.
var corsMethods = []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete}

// cors answers CORS preflights (details.md §1): the origin echoed, the methods the path
// serves, the requested headers echoed, credentials allowed, cached for 10 minutes. Other
// requests that carry an Origin get the origin echoed so browsers may read the answer.
func (s *Server) cors(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
		if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
			h.Set("Access-Control-Expose-Headers", "Service-Operation-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset")
			next.ServeHTTP(w, r)
			return
		}
		var allowed []string
		for _, method := range corsMethods {
			probe := r.Clone(r.Context())
			probe.Method = method
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allowed = append(allowed, method)
			}
		}
		if len(allowed) == 0 {
			callOf(r).writeError(pathNotFound(r))
			return
		}
		h.Set("Access-Control-Allow-Methods", strings.Join(allowed, ", "))
		if requested := r.Header.Get("Access-Control-Request-Headers"); requested != "" {
			h.Set("Access-Control-Allow-Headers", requested)
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}
