package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// The targets of issue 17 for Warren's path, against the floors measured beside it.
const (
	targetRPSRatio   = 0.5              // of the proxy's requests per second at 16 connections
	targetAddedP99   = time.Millisecond // over the app direct, at one connection
	targetBulkRatio  = 0.5              // of the proxy's MB/s on one stream
	targetIdleMemory = 64 << 10         // bytes per idle connection
)

// targets checks Warren's path against issue 17's targets and, for each one missed, captures
// the profile that says where its time or memory goes: a CPU profile of this process under
// the load that missed, or a heap profile while idle connections are held. The profiles are
// written to e.profiles (bench/profiles next to BENCHMARKS.md) as traffic-*.pprof. The
// memory of an idle tunneled connection is tunneled's, a path where each connection holds a
// stream to the agent (an HTTPS edge's idle visitor holds none).
func (m *trafficMeasures) targets(ctx context.Context, e *env, warren, tunneled, direct, proxy, sshPath *trafficPath) ([]table, error) {
	w, px, sh := m.loads[warren], m.loads[proxy], m.loads[sshPath]
	added := w[1].P99 - m.loads[direct][1].P99
	// The profiles a target's miss captures: what the path did while it missed.
	var slowerThanSSH []string
	for _, c := range []struct {
		slower  bool
		profile string
	}{{w[1].RPS <= sh[1].RPS, requests1}, {w[16].RPS <= sh[16].RPS, requests16}, {m.bulk[warren] <= m.bulk[sshPath], bulk}} {
		if c.slower {
			slowerThanSSH = append(slowerThanSSH, c.profile)
		}
	}
	type target struct {
		name, measured string
		met            bool
		profiles       []string
	}
	list := []target{
		{fmt.Sprintf("req/s at 16 connections ≥ %.1f× the proxy's", targetRPSRatio), ratio(w[16].RPS, px[16].RPS),
			w[16].RPS >= targetRPSRatio*px[16].RPS, []string{requests16}},
		{fmt.Sprintf("added p99 at 1 connection ≤ %s", ms(targetAddedP99)), ms(added), added <= targetAddedP99, []string{requests1}},
		{fmt.Sprintf("one bulk stream ≥ %.1f× the proxy's MB/s", targetBulkRatio), ratio(m.bulk[warren], m.bulk[proxy]),
			m.bulk[warren] >= targetBulkRatio*m.bulk[proxy], []string{bulk}},
		{fmt.Sprintf("memory per idle tunneled connection (%s) ≤ %s", tunneled.name, kib(targetIdleMemory)), kib(m.idle[tunneled]),
			m.idle[tunneled] <= targetIdleMemory, []string{idleHeap}},
		{"faster than ssh -R (req/s at 1 and 16 connections, bulk MB/s)",
			fmt.Sprintf("%s, %s, %s of ssh's", ratio(w[1].RPS, sh[1].RPS), ratio(w[16].RPS, sh[16].RPS), ratio(m.bulk[warren], m.bulk[sshPath])),
			len(slowerThanSSH) == 0, slowerThanSSH},
	}
	if err := os.MkdirAll(e.profiles, 0o755); err != nil {
		return nil, err
	}
	old, _ := filepath.Glob(filepath.Join(e.profiles, "traffic-*.pprof"))
	for _, f := range old {
		_ = os.Remove(f) // a profile of a target this run meets would say nothing now
	}
	tbl := table{Caption: "Warren's path against the targets:", Header: []string{"target", "measured", "met", "profiles"}}
	var tables []table
	captured := map[string]bool{}
	for _, t := range list {
		if t.met {
			tbl.Rows = append(tbl.Rows, []string{t.name, t.measured, "met", ""})
			continue
		}
		var files []string
		for _, kind := range t.profiles {
			file := filepath.Join(e.profiles, "traffic-"+kind+".pprof")
			files = append(files, "`"+filepath.ToSlash(file)+"`")
			if captured[kind] {
				continue
			}
			captured[kind] = true
			e.logf("traffic: %s missed: profiling into %s", t.name, file)
			tops, err := m.profile(ctx, kind, file, warren, tunneled)
			if err != nil {
				return nil, fmt.Errorf("profiling %s: %w", kind, err)
			}
			tops[0].Caption = fmt.Sprintf("Why %q is missed: %s", t.name, tops[0].Caption)
			tables = append(tables, tops...)
		}
		tbl.Rows = append(tbl.Rows, []string{t.name, t.measured, "**missed**", strings.Join(files, ", ")})
	}
	return append([]table{tbl}, tables...), nil
}

// The profiles a missed target captures.
const (
	requests16 = "requests-16" // CPU while 16 connections load Warren's path
	requests1  = "requests-1"  // CPU while one connection does
	bulk       = "bulk"        // CPU while one stream downloads through it
	idleHeap   = "idle-heap"   // the heap that idle tunneled connections add
)

// profile captures a profile of the kind into file and returns its tables: the top functions,
// and for a CPU profile Warren's own.
func (m *trafficMeasures) profile(ctx context.Context, kind, file string, warren, tunneled *trafficPath) ([]table, error) {
	var what string
	var err error
	switch kind {
	case requests16, requests1:
		conns := 16
		if kind == requests1 {
			conns = 1
		}
		load := fmt.Sprintf("%d connections load", conns)
		if conns == 1 {
			load = "one connection loads"
		}
		what = fmt.Sprintf("the CPU of this process (the clients and the app run in it too) while %s Warren's path", load)
		err = cpuProfile(file, func() error {
			c := warren.client(conns)
			defer c.CloseIdleConnections()
			_, err := runLoad(ctx, conns, m.dur, warren.request(c))
			return err
		})
	case bulk:
		what = "the CPU of this process (the client and the app run in it too) while one stream downloads through Warren's path"
		err = cpuProfile(file, func() error { _, err := warren.download(ctx, m.bulkMiB); return err })
	case idleHeap:
		what = fmt.Sprintf("the heap that %d idle connections held through %s add (the app's connections among them)", m.idleN, tunneled.name)
		err = m.heapProfile(ctx, tunneled, file)
	}
	if err != nil {
		return nil, err
	}
	top, err := pprofTop(ctx, file)
	if err != nil {
		return nil, err
	}
	top.Caption = fmt.Sprintf("the top functions by their own share of %s (`%s`; `go tool pprof -top` on it shows more):", what, filepath.ToSlash(file))
	if kind == idleHeap {
		return []table{top}, nil
	}
	// The functions of Warren and of the libraries it carries traffic with, by the share of
	// the CPU spent in them and what they call: which of its parts the time goes to.
	own, err := pprofTop(ctx, file, "-cum", "-show="+warrenCode)
	if err != nil {
		return nil, err
	}
	own.Caption = "The same profile, Warren's functions and its multiplexer's and WebSocket's only, by cumulative share:"
	return []table{top, own}, nil
}

// heapProfile writes the heap in use while the idle connections are held through p to file,
// and the heap before they opened to its base (file with ".base" before ".pprof"), every
// allocation recorded meanwhile; pprofTop shows the difference.
func (m *trafficMeasures) heapProfile(ctx context.Context, p *trafficPath, file string) error {
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = rate }()
	if err := writeHeapProfile(heapBase(file)); err != nil {
		return err
	}
	_, err := p.holdIdle(ctx, m.clients, m.caFile, m.app, m.idleN, func() error { return writeHeapProfile(file) })
	return err
}

func heapBase(file string) string { return strings.TrimSuffix(file, ".pprof") + ".base.pprof" }

func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

// warrenCode matches the functions of Warren's packages and of the libraries its traffic
// goes through, for pprof's -show.
const warrenCode = `terraform-provider-warren/(apiserver|internal)|hashicorp/yamux|coder/websocket`

// cpuProfile writes this process's CPU profile to file while during runs.
func cpuProfile(file string, during func() error) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	runErr := during()
	pprof.StopCPUProfile()
	return errors.Join(runErr, f.Close())
}

// pprofTop is the top of a profile as `go tool pprof -top` prints it with args: of the CPU,
// or of the heap in use grown since its base when it is a heap profile with one.
func pprofTop(ctx context.Context, file string, args ...string) (table, error) {
	args = append([]string{"tool", "pprof", "-top", "-nodecount=15"}, args...)
	_, err := os.Stat(heapBase(file))
	heap := err == nil
	if heap {
		args = append(args, "-sample_index=inuse_space", "-diff_base="+heapBase(file))
	}
	out, err := exec.CommandContext(ctx, "go", append(args, file)...).Output()
	if err != nil {
		return table{}, fmt.Errorf("go tool pprof %s: %w", file, err)
	}
	tbl := table{Header: []string{"flat", "flat%", "cum", "cum%", "function"}}
	if heap {
		tbl.Header = []string{"flat", "cum", "function"} // shares of a difference say nothing
	}
	rows := false
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && f[0] == "flat" && f[1] == "flat%":
			rows = true
		case rows && len(f) >= 6 && heap:
			tbl.Rows = append(tbl.Rows, []string{f[0], f[3], "`" + strings.Join(f[5:], " ") + "`"})
		case rows && len(f) >= 6:
			tbl.Rows = append(tbl.Rows, []string{f[0], f[1], f[3], f[4], "`" + strings.Join(f[5:], " ") + "`"})
		}
	}
	if len(tbl.Rows) == 0 {
		return table{}, fmt.Errorf("go tool pprof %s: no functions in:\n%s", file, out)
	}
	return tbl, nil
}
