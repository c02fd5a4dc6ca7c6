package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
