// Command bench is make bench: it measures Warren against its floors on this machine in one
// run (a bare net/http handler, raw inserts into the same database, terraform_data, a peer
// provider), prints the ratios and writes them to BENCHMARKS.md with a chart. It never
// asserts a time: it reports.
//
//	go run ./bench [-quick] [-only http,creates] [-out BENCHMARKS.md] [-chart bench/throughput.png]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"
)

// A section measures one thing against its floor and says what it found.
type section struct {
	name  string // for -only
	title string
	run   func(ctx context.Context, e *env) (*result, error)
}

// sections run in this order; each file of the package adds its own.
var sections = []section{
	httpSection,
	createsSection,
	pagesSection,
	scaleSection,
	terraformSection,
	trafficSection,
	clusterSection,
}

func main() {
	var (
		quick = flag.Bool("quick", false, "small sizes and short runs: checks that every section works, measures nothing worth publishing")
		only  = flag.String("only", "", "comma-separated sections to run (default all): "+sectionNames())
		out   = flag.String("out", "BENCHMARKS.md", "the report to write (empty: print only)")
		chart = flag.String("chart", "bench/throughput.png", "the chart of throughput and latency against connections (empty: none)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *quick, *only, *out, *chart); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func sectionNames() string {
	var names []string
	for _, s := range sections {
		names = append(names, s.name)
	}
	return strings.Join(names, ",")
}

func run(ctx context.Context, quick bool, only, out, chart string) error {
	var selected []section
	for _, s := range sections {
		if only == "" || slices.Contains(strings.Split(only, ","), s.name) {
			selected = append(selected, s)
		}
	}
	if len(selected) == 0 {
		return fmt.Errorf("no section named %q (sections: %s)", only, sectionNames())
	}
	e, err := newEnv(quick, out)
	if err != nil {
		return err
	}
	defer e.close()
	rep := &report{Machine: describeMachine(), Started: time.Now(), Quick: quick}
	for _, s := range selected {
		e.logf("== %s", s.title)
		start := time.Now()
		res, err := s.run(ctx, e)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		res.Name, res.Title, res.Took = s.name, s.title, time.Since(start)
		fmt.Println(res.markdown())
		rep.Results = append(rep.Results, res)
	}
	if out != "" {
		var previous []byte
		if only != "" {
			previous, _ = os.ReadFile(out) // none yet is fine
		}
		if err := os.WriteFile(out, []byte(rep.markdown(chart, string(previous))), 0o644); err != nil {
			return err
		}
		e.logf("wrote %s", out)
	}
	if chart != "" && rep.hasSeries() {
		if err := writeChart(chart, rep); err != nil {
			return err
		}
		e.logf("wrote %s", chart)
	}
	return nil
}
