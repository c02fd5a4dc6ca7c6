// Command demo-app is the small local app that `make demo` serves through Warren: it answers
// every request with one line naming what it received, so that the demo shows which request
// crossed the edge and the agent, and what the edge told the app about the visitor. With
// --oidc-listen it also runs a local OpenID Connect provider (mockoidc: it signs in its
// demo user without asking), which the quickstart's protected route sends visitors to.
//
//	go run ./examples/demo-app --listen 127.0.0.1:18083 --oidc-listen 127.0.0.1:18084
//	warren-agent --label app=shop --forwards-to http://127.0.0.1:18083
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18083", "address to listen on")
	oidcListen := flag.String("oidc-listen", "", "address of the local OpenID Connect provider (none when empty); its issuer is http://<address>/oidc")
	clientID := flag.String("oidc-client-id", "warren-demo", "the client ID the provider accepts")
	clientSecret := flag.String("oidc-client-secret", "warren-demo-secret", "the client secret the provider accepts")
	flag.Parse()
	if *oidcListen != "" {
		go func() { log.Fatal(serveOIDC(*oidcListen, *clientID, *clientSecret)) }()
	}
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

// serveOIDC runs mockoidc's handlers on addr with the given client, behind a server with
// bounded header reads.
func serveOIDC(addr, clientID, clientSecret string) error {
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return err
	}
	m.ClientID, m.ClientSecret = clientID, clientSecret
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(mockoidc.AuthorizationEndpoint, m.Authorize)
	mux.HandleFunc(mockoidc.TokenEndpoint, m.Token)
	mux.HandleFunc(mockoidc.UserinfoEndpoint, m.Userinfo)
	mux.HandleFunc(mockoidc.JWKSEndpoint, m.JWKS)
	mux.HandleFunc(mockoidc.DiscoveryEndpoint, m.Discovery)
	m.Server = &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("demo OpenID Connect provider: issuer %s", m.Issuer())
	return m.Server.Serve(ln)
}
