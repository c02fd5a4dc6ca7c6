// Command event-sink is a local logs intake for trying Warren's events without a cloud
// account: it accepts what the observability target sends (POST /api/v2/logs with the
// DD-API-KEY header, a JSON array of log items, gzip or deflate allowed) and prints each
// event it carries as one JSON line on stdout.
//
//	go run ./examples/event-sink --listen 127.0.0.1:18081 --api-key demo-key
//	warren-apiserver --event-endpoint-observability http://127.0.0.1:18081
//
// It is a sink for demos and local development, not a log store: nothing is kept.
package main

import (
	"compress/gzip"
	"compress/zlib"
	"crypto/subtle"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18081", "address to listen on")
	apiKey := flag.String("api-key", "", "the API key the target must send (required)")
	flag.Parse()
	if *apiKey == "" {
		fmt.Fprintln(os.Stderr, "event-sink: --api-key is required")
		os.Exit(2)
	}
	var out sync.Mutex
	http.HandleFunc("POST /api/v2/logs", func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("DD-API-KEY")), []byte(*apiKey)) != 1 {
			http.Error(w, `{"errors":["Forbidden"]}`, http.StatusForbidden)
			return
		}
		body, err := decoded(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var items []struct {
			Message string `json:"message"`
		}
		if err := json.NewDecoder(io.LimitReader(body, 10<<20)).Decode(&items); err != nil {
			http.Error(w, "the body is not a JSON array of log items: "+err.Error(), http.StatusBadRequest)
			return
		}
		out.Lock()
		for _, item := range items {
			fmt.Println(item.Message)
		}
		out.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("{}"))
	})
	log.Printf("event-sink listening on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}

// decoded undoes the request's Content-Encoding.
func decoded(r *http.Request) (io.Reader, error) {
	switch r.Header.Get("Content-Encoding") {
	case "gzip":
		return gzip.NewReader(r.Body)
	case "deflate":
		return zlib.NewReader(r.Body)
	case "", "identity":
		return r.Body, nil
	}
	return nil, fmt.Errorf("unsupported Content-Encoding %q", r.Header.Get("Content-Encoding"))
}
