package apiservertest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/traffic"
)

// Edge is an edge serving the test server's configuration, with the server's agent plane
// as its tunnels, on loopback listeners.
type Edge struct {
	*edge.Edge
	HTTPS, HTTP string // the addresses of the HTTPS and plain HTTP listeners
}

// SetSAMLHandler mounts an edge's SAML service provider on the server (StartEdge does it
// for its edge).
func (s *Server) SetSAMLHandler(h http.Handler) { s.api.SetSAMLHandler(h) }

// EdgeTunnels is the server's agent plane as the edge reaches it.
func (s *Server) EdgeTunnels() edge.Tunnels { return s.api.EdgeTunnels() }

// StartEdge serves the edge until the test ends: HTTPS and plain HTTP on loopback ports of
// their own, the reserved TCP addresses on 127.0.0.1, its metrics on the server's
// /metrics. configure may change the options (a poll interval, allowed private backends).
func (s *Server) StartEdge(t testing.TB, configure ...func(*edge.Options)) *Edge {
	t.Helper()
	e := startEdge(t, edge.Options{Store: s.Store, Tunnels: s.EdgeTunnels(), Registerer: s.api.MetricsRegisterer(), Traffic: s.api.TrafficRecorder()}, configure)
	s.api.SetSAMLHandler(e.SAMLHandler())
	return e
}

// StartReplicaEdge serves an edge as another replica's would, on st (a store of its own on
// this server's database), with this server's tunnels and no metrics, until the test ends.
func (s *Server) StartReplicaEdge(t testing.TB, st store.Store, configure ...func(*edge.Options)) *Edge {
	t.Helper()
	return startEdge(t, edge.Options{Store: st, Tunnels: s.EdgeTunnels()}, configure)
}

func startEdge(t testing.TB, o edge.Options, configure []func(*edge.Options)) *Edge {
	t.Helper()
	o.PollInterval = 50 * time.Millisecond
	for _, f := range configure {
		f(&o)
	}
	e, err := edge.New(context.Background(), o)
	if err != nil {
		t.Fatalf("start the edge: %v", err)
	}
	https, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(ctx) })
	wg.Go(func() { _ = e.ServeHTTPS(https) })
	wg.Go(func() { _ = e.ServePlainHTTP(plain) })
	e.ServeTCP("127.0.0.1")
	t.Cleanup(func() {
		cancel()
		https.Close()
		plain.Close()
		_ = e.Close()
		wg.Wait()
	})
	return &Edge{Edge: e, HTTPS: https.Addr().String(), HTTP: plain.Addr().String()}
}

// TrafficRecorder counts the traffic of an edge for the server's GET <edge>/{id}/traffic
// (edge.Options.Traffic; StartEdge sets it).
func (s *Server) TrafficRecorder() *traffic.Recorder { return s.api.TrafficRecorder() }

// FlushTraffic writes the traffic the edge counted so far, for GET <edge>/{id}/traffic.
func (s *Server) FlushTraffic(t testing.TB) {
	t.Helper()
	if err := s.api.FlushTraffic(t.Context()); err != nil {
		t.Fatalf("flush the traffic: %v", err)
	}
}

// ServeCluster answers the other replicas' cluster links on ln (the server's options need
// Agents.Link) until the test ends, or stop closes ln.
func (s *Server) ServeCluster(t testing.TB, ln net.Listener) (stop func()) {
	go func() { _ = s.api.ServeCluster(ln) }()
	stop = func() { _ = ln.Close() }
	t.Cleanup(stop)
	return stop
}
