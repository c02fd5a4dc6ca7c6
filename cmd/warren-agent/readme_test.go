package main

import (
	"flag"
	"testing"
)

var update = flag.Bool("update", false, "write the README's flag table from the flag definitions")

// TestREADMEFlagTable: the README's table of this command's flags is the one its flag
// definitions give (-update writes it).
func TestREADMEFlagTable(t *testing.T) {
	fs, _ := newFlagSet()
	if err := fs.SyncREADME("../../README.md", *update); err != nil {
		t.Fatal(err)
	}
}
