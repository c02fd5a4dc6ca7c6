// Package console is the web console served under /console/: a small front end, committed
// and embedded (no build step), that signs in with an API key kept in the tab's session
// storage and reads and acts only through the public API, like any other client.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Path is where the console is served.
const Path = "/console/"

// CSP lets the page load its own script, style and data and nothing else: no inline script
// or style, no other origin, no framing.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// family is what the console knows of an API family: families.json, made from the family
// table (internal/api), so that a path is spelled once.
type family struct {
	Path   string `json:"path"`
	Member string `json:"member"`
	Prefix string `json:"prefix"`
	Parent string `json:"parent,omitempty"` // the parent's path
	NoList bool   `json:"no_list,omitempty"`
}

// Handler serves the console's files under Path, and redirects /console there.
func Handler() http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is there by construction
	}
	var fams []family
	for _, f := range api.Families {
		if f == api.BotUsers { // the deprecated alias of service users
			continue
		}
		fam := family{Path: f.Path, Member: f.Member, Prefix: f.Prefix, NoList: f.NoList}
		if f.Parent != nil {
			fam.Parent = f.Parent.Path
		}
		fams = append(fams, fam)
	}
	famJSON, err := json.Marshal(fams)
	if err != nil {
		panic(err)
	}
	fileServer := http.StripPrefix(Path, http.FileServerFS(files))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == strings.TrimSuffix(Path, "/") {
			http.Redirect(w, r, Path, http.StatusMovedPermanently)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == Path+"families.json" {
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(famJSON)
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}

// Mount serves the console under Path and everything else with next.
func Mount(next http.Handler) http.Handler {
	console := Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == strings.TrimSuffix(Path, "/") || strings.HasPrefix(r.URL.Path, Path) {
			console.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
