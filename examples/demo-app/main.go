// Command demo-app is the small local app that `make demo` serves through Warren: it answers
// every request with one line naming what it received, so that the demo shows which request
// crossed the edge and the agent, and what the edge told the app about the visitor (its
// signed-in identity on a route with a sign-in module).
//
//	go run ./examples/demo-app --listen 127.0.0.1:18083
//	warren-agent --label app=shop --forwards-to http://127.0.0.1:18083
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18083", "address to listen on")
	flag.Parse()
	srv := &http.Server{
		Addr: *listen,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "Hello from the demo app: %s %s for %s (X-Forwarded-For %q, X-Forwarded-Proto %q, X-Served-By %q",
				r.Method, r.URL.Path, r.Host, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto"), r.Header.Get("X-Served-By"))
			if email := r.Header.Get("Warren-Auth-User-Email"); email != "" {
				fmt.Fprintf(w, ", signed in as %q through %q", email, r.Header.Get("Warren-Auth-Provider"))
			}
			fmt.Fprintln(w, ")")
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Fatal(srv.ListenAndServe())
}
