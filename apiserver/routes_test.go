package apiserver_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

var update = flag.Bool("update", false, "rewrite testdata/routes.txt and testdata/openapi.json from the server's route table")

// TestRouteTable pins every route the server serves in testdata/routes.txt, so that a change
// to the API shows in review. Regenerate with: go test ./apiserver -run TestRouteTable -update
func TestRouteTable(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warren.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := apiserver.New(ctx, apiserver.Options{Store: db, BaseURL: "http://warren.test", BootstrapAPIKey: ids.NewToken(ids.New(ids.APIKey))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Every family of the table in internal/api is served.
	for _, f := range api.Families {
		if !slices.Contains(srv.Routes(), "POST "+f.Path) && !slices.Contains(srv.Routes(), "GET "+f.Path+"/{id}") {
			t.Errorf("%s is in api.Families but not served", f.Path)
		}
	}
	got := strings.Join(srv.Routes(), "\n") + "\n"
	const file = "testdata/routes.txt"
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the route table changed; if that is intended, run: go test ./apiserver -run TestRouteTable -update\ngot:\n%s", got)
	}
}
