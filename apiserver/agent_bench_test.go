package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentclient"
)

// BenchmarkConnectedAgents reports the memory in use (heap and goroutine stacks) per
// connected agent (bytes/agent): each
// iteration connects N real agents (internal/agentclient, in-process, so both ends of each
// connection count) to one server, each with a labeled tunnel, and measures the heap in use
// before and after. As a floor it measures N idle WebSocket connections to a bare echo
// handler in the same way (floor-bytes/conn), both ends counted too, and reports the ratio.
// ns/op is the time to connect N agents until all are ready.
func BenchmarkConnectedAgents(b *testing.B) {
	const n = 200
	srv := apiservertest.Start(b, apiservertest.NoRateLimit, noDelivery)
	var cred struct{ Token string }
	if err := json.Unmarshal(benchRequest(b, srv, "POST", "/credentials", `{"acl":[]}`, 201), &cred); err != nil {
		b.Fatal(err)
	}
	floorURL := echoServer(b)

	var agentBytes, floorBytes float64
	for b.Loop() {
		b.StopTimer()
		floorBytes += heapPer(b, n, func() func() { return idleConns(b, floorURL, n) })
		b.StartTimer()
		agentBytes += heapPer(b, n, func() func() { return connectAgents(b, srv.URL, cred.Token, n) })
	}
	agentBytes /= float64(b.N)
	floorBytes /= float64(b.N)
	b.ReportMetric(agentBytes, "bytes/agent")
	b.ReportMetric(floorBytes, "floor-bytes/conn")
	b.ReportMetric(agentBytes/floorBytes, "agent/floor")
}

// heapPer returns the growth of the memory in use (heap and goroutine stacks), per
// connection, while what start opens is open; start returns what closes it. It returns once
// the goroutines that the connections started have ended, so that the next measure starts
// from the same state.
func heapPer(b *testing.B, n int, start func() (stop func())) float64 {
	var before, after runtime.MemStats
	goroutines := runtime.NumGoroutine()
	settle()
	runtime.ReadMemStats(&before)
	stop := start()
	settle()
	runtime.ReadMemStats(&after)
	stop()
	// Both ends finish in the background (the server deletes the sessions' rows).
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	inUse := func(m *runtime.MemStats) float64 { return float64(m.HeapInuse + m.StackInuse) }
	return (inUse(&after) - inUse(&before)) / float64(n)
}

// settle collects the garbage, sync.Pool caches included (they last two cycles).
func settle() {
	runtime.GC()
	runtime.GC()
}

// connectAgents runs n agents until all are ready, and returns what stops them.
func connectAgents(b *testing.B, server, token string, n int) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, n)
	for i := range n {
		a, err := agentclient.New(agentclient.Config{
			ServerURL: server, Authtoken: token,
			Tunnels: []agentclient.TunnelConfig{{Proto: "http", Labels: map[string]string{"agent": fmt.Sprint(i)}, ForwardsTo: "http://localhost:8080"}},
		})
		if err != nil {
			b.Fatal(err)
		}
		go func() { done <- a.Run(ctx) }()
		if _, err := a.Wait(context.Background(), func(s agentclient.State) bool { return s.Ready }); err != nil {
			b.Fatal(err)
		}
	}
	return func() {
		cancel()
		for range n {
			<-done
		}
	}
}

// echoServer is a bare WebSocket echo handler: the floor of a connection's cost.
func echoServer(b *testing.B) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			typ, data, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			if err := ws.Write(r.Context(), typ, data); err != nil {
				return
			}
		}
	}))
	b.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http")
}

// idleConns opens n WebSocket connections to url, each with a reader as an agent has, and
// returns what closes them.
func idleConns(b *testing.B, url string, n int) func() {
	conns := make([]*websocket.Conn, n)
	done := make(chan struct{}, n)
	for i := range conns {
		ws, _, err := websocket.Dial(context.Background(), url, nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = ws
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				if _, _, err := ws.Read(context.Background()); err != nil {
					return
				}
			}
		}()
	}
	return func() {
		for _, ws := range conns {
			_ = ws.Close(websocket.StatusNormalClosure, "")
		}
		for range n {
			<-done
		}
	}
}
