package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuick runs every section with -quick sizes, so make test proves that make bench works
// on a fresh clone; the numbers of such a run mean nothing and are not checked.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark section")
	}
	for _, s := range sections {
		t.Run(s.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "BENCHMARKS.md")
			chart := filepath.Join(t.TempDir(), "chart.png")
			if err := run(context.Background(), true, s.name, out, chart); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "## "+s.title) || !strings.Contains(string(data), "|---|") {
				t.Fatalf("the report has no table for %q:\n%s", s.title, data)
			}
		})
	}
}

// TestReportKeepsSectionsNotRun: a run of some sections rewrites those and keeps the others
// from the report it replaces, in the sections' order, saying which run measured them.
func TestReportKeepsSectionsNotRun(t *testing.T) {
	measured := func(s section, value string) *result {
		return &result{Name: s.name, Title: s.title, Tables: []table{{Header: []string{"value"}, Rows: [][]string{{value}}}}}
	}
	earlier := &report{Machine: "cpu: test", Started: time.Date(2026, 11, 23, 13, 26, 0, 0, time.UTC),
		Results: []*result{measured(httpSection, "old reads"), measured(trafficSection, "old traffic")}}
	previous := earlier.markdown("bench/throughput.png", "")
	later := &report{Machine: "cpu: test", Started: time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC),
		Results: []*result{measured(trafficSection, "new traffic")}}

	got := later.markdown("bench/throughput.png", previous)
	for _, want := range []string{
		"Run on 2026-11-26 17:00 UTC.",
		"## " + httpSection.title + "\n\n_Measured in the run of 2026-11-23 13:26 UTC (later runs measured other sections only)._\n\n| value |\n|---|\n| old reads |\n",
		"## " + trafficSection.title + "\n\n| value |\n|---|\n| new traffic |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old traffic") {
		t.Errorf("the report keeps the section it measured again:\n%s", got)
	}
	if strings.Index(got, httpSection.title) > strings.Index(got, trafficSection.title) {
		t.Errorf("the sections are not in their order:\n%s", got)
	}
	again := (&report{Machine: "cpu: test", Started: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC),
		Results: []*result{measured(trafficSection, "newer traffic")}}).markdown("", got)
	if n := strings.Count(again, keptMark); n != 1 {
		t.Errorf("a section kept twice is marked %d times:\n%s", n, again)
	}
	if !strings.Contains(again, "2026-11-23 13:26 UTC") {
		t.Errorf("a section kept twice lost the date of the run that measured it:\n%s", again)
	}
}
