package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

var clusterSection = section{
	name:  "cluster",
	title: "Traffic across replicas: a request forwarded over the cluster link against a local one",
	run:   runCluster,
}

// The hosts the TCP edges of the two replicas listen on: both serve the reserved address's
// port, on loopback addresses of their own.
const (
	tcpHostA = "127.0.0.1"
	tcpHostB = "127.0.0.2"
)

// clusterPaths are the paths to the app through two replicas: through A, which holds the
// agent (local), and through B, which forwards each stream over the cluster link to A.
type clusterPaths struct {
	httpsLocal, httpsForwarded, tcpLocal, tcpForwarded *trafficPath
}

// runCluster measures the same app through the same edges of two replicas on one PostgreSQL
// database, the agent connected to A: through A's edges and through B's, whose streams cross
// the cluster link, beside the app direct and the TLS reverse proxy of the traffic section,
// with its load, bulk stream and idle connections.
func runCluster(ctx context.Context, e *env) (*result, error) {
	f, err := startFloors(e, "cluster")
	if err != nil {
		return nil, err
	}
	defer f.close()
	app, direct, proxy := f.app, f.direct, f.proxy
	c, stop, err := startClusterPaths(ctx, e, app, f.certPEM, f.keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the replicas' paths: %w", err)
	}
	defer stop()

	m, err := measureTraffic(ctx, e, app, f.caFile, []*trafficPath{direct, c.httpsLocal, c.httpsForwarded, c.tcpLocal, c.tcpForwarded, proxy})
	if err != nil {
		return nil, err
	}
	res := m.result(direct, proxy)
	res.Tables = append([]table{m.forwardedTable(c, proxy)}, res.Tables...)
	res.Intro = fmt.Sprintf("Two Warren replicas in this process on one durable PostgreSQL database (fsync and synchronous commit on), each with its API, "+
		"its agent plane, its edge (HTTPS on a loopback listener, TCP on the reserved address's port of a loopback address of its own) and its cluster link "+
		"(Options.Agents.Link and ServeCluster, as `--cluster-listen` wires them); one agent (internal/agentclient) connected to replica A with the traffic "+
		"section's two tunnels to the same app (a %d-byte answer at `/`, N MiB at `/bulk`), configured through A's API as there: the reserved domain %s with its "+
		"uploaded certificate, an HTTPS edge whose route / goes to a tunnel-group backend, a reserved address with a TCP edge. "+
		"A request through A's edges is local (a stream to the agent); through B's it is forwarded: B opens the stream over the link to A (`apiserver/cluster`), "+
		"which opens it to the agent and copies between the two. Beside them, in the same run, the floors of the traffic section: "+
		"the app direct and a TLS-terminating `httputil.ReverseProxy` with the same certificate. Same clients, sizes and interleaving as the traffic section: "+
		"closed-loop Go clients with HTTP/1.1 keep-alive in this process, %s per point for each path, in %d slices that take turns.",
		len(appBody), trafficDomain, m.dur, m.rounds)
	res.Findings = append(res.Findings, m.forwardedFindings(c)...)
	return res, nil
}

// forwardedTable sets each measure of the forwarded paths against the local ones and both
// against the proxy.
func (m *trafficMeasures) forwardedTable(c *clusterPaths, proxy *trafficPath) table {
	t := table{
		Caption: "Forwarded (through replica B, over the cluster link) against local (through replica A, which holds the agent), and both against the TLS reverse proxy:",
		Header:  []string{"edge", "measure", "local", "forwarded", "forwarded ÷ local", "local ÷ proxy's", "forwarded ÷ proxy's"},
	}
	row := func(edge, measure string, local, forwarded, floor float64, format func(float64) string) {
		t.Rows = append(t.Rows, []string{edge, measure, format(local), format(forwarded), ratio(forwarded, local), ratio(local, floor), ratio(forwarded, floor)})
	}
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	milli := func(v float64) string { return fmt.Sprintf("%.2f ms", v) }
	for _, e := range []struct {
		name             string
		local, forwarded *trafficPath
	}{{"HTTPS", c.httpsLocal, c.httpsForwarded}, {"TCP", c.tcpLocal, c.tcpForwarded}} {
		for _, conns := range m.conns {
			l, f, p := m.loads[e.local][conns], m.loads[e.forwarded][conns], m.loads[proxy][conns]
			at := fmt.Sprintf("at %d connections", conns)
			if conns == 1 {
				at = "at 1 connection"
			}
			row(e.name, "req/s "+at, l.RPS, f.RPS, p.RPS, count)
			row(e.name, "p50 "+at, l.P50.Seconds()*1e3, f.P50.Seconds()*1e3, p.P50.Seconds()*1e3, milli)
			row(e.name, "p99 "+at, l.P99.Seconds()*1e3, f.P99.Seconds()*1e3, p.P99.Seconds()*1e3, milli)
		}
		row(e.name, fmt.Sprintf("one stream of %d MiB, MB/s", m.bulkMiB), m.bulk[e.local], m.bulk[e.forwarded], m.bulk[proxy], count)
	}
	return t
}

// forwardedFindings say what forwarding costs a request, a stream and an idle connection.
func (m *trafficMeasures) forwardedFindings(c *clusterPaths) []string {
	hl, hf := m.loads[c.httpsLocal], m.loads[c.httpsForwarded]
	perStream := m.idle[c.tcpForwarded] - m.idle[c.tcpLocal]
	return []string{
		fmt.Sprintf("A request forwarded through the HTTPS edge runs at %s of a local one's requests per second at 1 connection and %s at 16, "+
			"adding %s at the median and %s at p99 at 1 connection; one bulk stream moves %s of the local MB/s.",
			ratio(hf[1].RPS, hl[1].RPS), ratio(hf[16].RPS, hl[16].RPS), ms(hf[1].P50-hl[1].P50), ms(hf[1].P99-hl[1].P99),
			ratio(m.bulk[c.httpsForwarded], m.bulk[c.httpsLocal])),
		"The HTTPS edges keep their streams to the agent pooled (keep-alive to the app through the tunnel), so a forwarded request reuses a forwarded " +
			"stream and pays the extra hop's copies, not the opening of a stream over the link; each new TCP-edge visitor connection opens a forwarded stream of its own.",
		fmt.Sprintf("Memory per forwarded stream: an idle TCP-edge connection through B holds %s against %s through A (both counted over the whole process, "+
			"both replicas' and the agent's ends, less the app's share), so a forwarded stream adds %s: B's end of the visitor's connection and the link's "+
			"two ends of the stream with their copies.",
			kib(m.idle[c.tcpForwarded]), kib(m.idle[c.tcpLocal]), kib(perStream)),
		"Fixed: A's end of the link copied each forwarded stream with io.Copy, which holds a 32 KiB buffer per direction while the stream is idle; it copies " +
			"with internal/netcopy now, as the edge and the agent do (a small buffer while idle, a pooled large one while data keeps coming). Measured on the same " +
			"loaded machine, one run each: an idle TCP-edge connection through B went from 123.8 KiB to 63.9 KiB, what forwarding adds from 76.8 KiB to 18.7 KiB.",
		fmt.Sprintf("The machine's load average as this section ended: %s (1, 5 and 15 minutes; it has %d CPUs). On a machine that other work keeps busy, "+
			"requests per second and p99 swing between runs by more than forwarding costs (at a load of 10 to 18, forwarded ÷ local req/s at 1 connection "+
			"on the HTTPS edge was 1.06×, 0.67× and 1.41× in three runs of one session), while the median stays steady: compare within one run, and take "+
			"the cost of the hop itself from a quiet machine.", loadAverage(), runtime.NumCPU()),
		"Both replicas, the agent, the app and the clients share this process's CPU and garbage collector (the idle clients run as their own process); " +
			"PostgreSQL runs beside them but carries no traffic: the replicas read the routing and the other's tunnels from it, not per request.",
	}
}

// startClusterPaths starts replicas A and B on one new PostgreSQL database with their cluster
// links, the account configured through A's API (configureShop), an edge on each and the
// agent on A; stop closes everything.
func startClusterPaths(ctx context.Context, e *env, app *trafficApp, certPEM, keyPEM []byte) (c *clusterPaths, stop func(), err error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	dsn, err := e.postgresDatabase()
	if err != nil {
		return nil, nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	logger := zaplog.New(zap.NewAtomicLevelAt(zap.InfoLevel), io.Discard)
	var replicas []*warren
	for _, name := range []string{"a", "b"} {
		// Both replicas' stores seal with benchKeys: the link's key is derived from them.
		db, err := postgres.Open(ctx, dsn, sqlstore.WithKeys(benchKeys))
		if err != nil {
			return nil, nil, err
		}
		link, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		w, err := e.startWarren(ctx, db, noRateLimit, func(o *apiserver.Options) {
			o.Logger = logger.Named(name)
			if len(replicas) > 0 {
				o.BootstrapAPIKey = replicas[0].Token // the key A bootstrapped the database with
			}
			o.AddrPool.MinPort, o.AddrPool.MaxPort = port, port
			o.Agents.Link = link.Addr().String()
		})
		if err != nil {
			link.Close()
			db.Close()
			return nil, nil, err
		}
		go func() { _ = w.Server.ServeCluster(link) }()
		closers = append(closers, func() { link.Close(); w.Close() })
		replicas = append(replicas, w)
	}
	a, b := replicas[0], replicas[1]

	agentToken, tcpAddr, err := configureShop(ctx, a, certPEM, keyPEM)
	if err != nil {
		return nil, nil, err
	}
	httpsA, stopA, err := serveEdge(ctx, a, logger.Named("a"), tcpHostA)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, stopA)
	httpsB, stopB, err := serveEdge(ctx, b, logger.Named("b"), tcpHostB)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, stopB)
	stopAgent, err := startAgent(ctx, a, agentToken, app, logger.Named("a"))
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, stopAgent)

	c = &clusterPaths{
		httpsLocal:     httpsPath("Warren, HTTPS edge, local (replica A)", httpsA, certPEM, func() {}),
		httpsForwarded: httpsPath("Warren, HTTPS edge, forwarded (replica B)", httpsB, certPEM, func() {}),
		tcpLocal:       tcpPath("Warren, TCP edge, local (replica A)", tcpHostA, tcpAddr),
		tcpForwarded:   tcpPath("Warren, TCP edge, forwarded (replica B)", tcpHostB, tcpAddr),
	}
	// B learns the agent's tunnels on A within its plane's refresh of the others' tunnels.
	if err := waitAnswering(ctx, c.httpsLocal, c.httpsForwarded, c.tcpLocal, c.tcpForwarded); err != nil {
		return nil, nil, err
	}
	return c, closeAll, nil
}

// loadAverage is the machine's 1, 5 and 15 minute load averages ("unknown" where
// /proc/loadavg is missing): the numbers above mean little on a busy machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}
