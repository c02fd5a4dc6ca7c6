package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// result is what a section found: tables, the findings in words, and series for the chart.
type result struct {
	Name, Title string
	Took        time.Duration
	Intro       string   // what is measured against what
	Tables      []table  // the numbers
	Findings    []string // what the numbers say, what was fixed, what stands in the way
	Series      []series // throughput and latency against connections, for the chart
}

type table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// series is one line of the chart: a value at each number of connections.
type series struct {
	Name   string    // e.g. "Warren GET by ID"
	Metric string    // "req/s" or "p99 ms"
	Conns  []int     // x
	Values []float64 // y
}

func (r *result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", r.Title)
	if r.Intro != "" {
		fmt.Fprintf(&b, "%s\n\n", r.Intro)
	}
	for _, t := range r.Tables {
		if t.Caption != "" {
			fmt.Fprintf(&b, "%s\n\n", t.Caption)
		}
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.Header, " | "), strings.Repeat("---|", len(t.Header)))
		for _, row := range t.Rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
		b.WriteString("\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

type report struct {
	Machine string
	Started time.Time
	Quick   bool
	Results []*result
}

func (r *report) hasSeries() bool {
	for _, res := range r.Results {
		if len(res.Series) > 0 {
			return true
		}
	}
	return false
}

// markdown writes the report. previous is the report an earlier run wrote, or empty: the
// sections this run did not measure are kept from it as they were, marked with that run's
// date, so that make bench BENCH_FLAGS=-only=... updates its sections alone.
func (r *report) markdown(chart, previous string) string {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Written by `make bench` (`go run ./bench`): every number is measured against its floor on the same machine in the same run, and the ratio is what counts. Nothing here is asserted by a test.\n\n")
	if r.Quick {
		b.WriteString("**This is a `-quick` run: sizes and durations are too small for the numbers to mean anything.**\n\n")
	}
	fmt.Fprintf(&b, "Run on %s.\n\n```\n%s\n```\n\n", r.Started.UTC().Format(runDateLayout), r.Machine)
	preamble, kept := splitReport(previous)
	if chart != "" && r.hasSeries() {
		fmt.Fprintf(&b, "![Throughput and latency against connections](%s)\n\n", chart)
	} else if line, ok := chartLine(preamble); ok {
		b.WriteString(line + "\n\n") // the chart of the kept sections, not redrawn
	}
	ran := map[string]*result{}
	for _, res := range r.Results {
		ran[res.Title] = res
	}
	previousRun := "an earlier run"
	if m := runDate.FindStringSubmatch(preamble); m != nil {
		previousRun = "the run of " + m[1]
	}
	for _, s := range sections {
		if res, ok := ran[s.title]; ok {
			b.WriteString(res.markdown())
		} else if text, ok := kept[s.title]; ok {
			b.WriteString(markKept(text, previousRun))
		}
	}
	return b.String()
}

const runDateLayout = "2006-01-02 15:04 MST"

var runDate = regexp.MustCompile(`(?m)^Run on (.+)\.$`)

// keptMark starts a kept section's first line, which says which run measured it.
const keptMark = "_Measured in "

// splitReport splits a report into what precedes its first section and its sections by title.
func splitReport(md string) (preamble string, sections map[string]string) {
	sections = map[string]string{}
	parts := strings.Split(md, "\n## ")
	preamble = parts[0]
	for _, part := range parts[1:] {
		title, _, _ := strings.Cut(part, "\n")
		sections[title] = "## " + part
	}
	return preamble, sections
}

func chartLine(preamble string) (string, bool) {
	for _, line := range strings.Split(preamble, "\n") {
		if strings.HasPrefix(line, "![") {
			return line, true
		}
	}
	return "", false
}

// markKept says under a kept section's title which run measured it, unless it already does.
func markKept(section, run string) string {
	title, body, _ := strings.Cut(section, "\n\n")
	if strings.HasPrefix(body, keptMark) {
		return strings.TrimRight(section, "\n") + "\n\n"
	}
	return title + "\n\n" + keptMark + run + " (later runs measured other sections only)._\n\n" + strings.TrimRight(body, "\n") + "\n\n"
}

// describeMachine names the CPU, cores, memory, OS and the tools' versions.
func describeMachine() string {
	lines := []string{
		fmt.Sprintf("cpu:       %s × %d (GOMAXPROCS %d)", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		fmt.Sprintf("memory:    %s", memTotal()),
		fmt.Sprintf("os:        %s/%s %s", runtime.GOOS, runtime.GOARCH, firstLine("uname", "-r")),
		fmt.Sprintf("go:        %s", runtime.Version()),
		fmt.Sprintf("terraform: %s", firstLine("terraform", "version")),
		fmt.Sprintf("postgres:  %s", postgresVersion()),
		fmt.Sprintf("openssh:   %s", opensshVersion()),
	}
	return strings.Join(lines, "\n")
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string {
	data, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(v), &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "not found"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// opensshVersion is what ssh -V prints (on its standard error).
func opensshVersion() string {
	out, err := exec.Command("ssh", "-V").CombinedOutput()
	if err != nil {
		return "not found"
	}
	return strings.TrimSpace(string(out))
}

func postgresVersion() string {
	found, _ := exec.Command("sh", "-c", "ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | tail -1").Output()
	if bin := strings.TrimSpace(string(found)); bin != "" {
		return firstLine(bin, "--version")
	}
	return "not found"
}

// Formatting helpers the sections share.

func ms(d time.Duration) string     { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
func secs(d time.Duration) string   { return fmt.Sprintf("%.2f s", d.Seconds()) }
func ratio(x, floor float64) string { return fmt.Sprintf("%.2f×", x/floor) }
func perSec(v float64) string       { return fmt.Sprintf("%.0f/s", v) }
func mib(bytes int64) string        { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }
func kib(bytes float64) string      { return fmt.Sprintf("%.1f KiB", bytes/(1<<10)) }
