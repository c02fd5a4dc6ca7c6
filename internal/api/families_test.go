package api

import (
	"strings"
	"testing"
)

func TestFamilyTable(t *testing.T) {
	paths, prefixes := map[string]bool{}, map[string]string{}
	for _, f := range Families {
		if paths[f.Path] {
			t.Errorf("path %s twice", f.Path)
		}
		paths[f.Path] = true
		// Only the deprecated /bot_users shares its prefix (and objects) with /service_users.
		if other, seen := prefixes[f.Prefix]; seen && !(other == ServiceUsers.Path && f == BotUsers) {
			t.Errorf("prefix %s of %s already used by %s", f.Prefix, f.Path, other)
		}
		prefixes[f.Prefix] = f.Path
		if !strings.HasSuffix(f.Prefix, "_") || strings.Count(f.Prefix, "_") != 1 {
			t.Errorf("%s: prefix %q must end in its only underscore", f.Path, f.Prefix)
		}
		if f.Member == "" || !strings.HasPrefix(f.Path, "/") {
			t.Errorf("%s: incomplete entry %+v", f.Path, f)
		}
		if f.Parent != nil && !strings.HasPrefix(f.Path, f.Parent.Path+"/{"+f.ParentParam+"}/") {
			t.Errorf("%s does not live under its parent %s", f.Path, f.Parent.Path)
		}
	}
}

func TestPathUnder(t *testing.T) {
	if got := HTTPSEdgeRoutes.PathUnder("edghts_1"); got != "/edges/https/edghts_1/routes" {
		t.Errorf("routes under an edge: %s", got)
	}
	if got := HTTPSEdges.PathUnder(""); got != "/edges/https" {
		t.Errorf("top level: %s", got)
	}
}
