package webhook_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// TestDocsTable: the route's documentation lists every provider with the header checked
// and the tolerance, as the table in this package says.
func TestDocsTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| Provider | Signature checked | Tolerance |\n|---|---|---|\n")
	for _, p := range rules.WebhookProviders {
		where, tol := webhook.Where(p), "none"
		if where == "" {
			where = "not known: every request refused (501 `ERR_8032`)"
		}
		if d := webhook.Tolerance(p); d >= time.Minute {
			tol = fmt.Sprintf("%d min", d/time.Minute)
		} else if d > 0 {
			tol = fmt.Sprintf("%d s", d/time.Second)
		}
		b.WriteString("| `" + p + "` | " + where + " | " + tol + " |\n")
	}
	doc, err := os.ReadFile("../../templates/resources/https_edge_route.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Fatalf("templates/resources/https_edge_route.md.tmpl does not hold the providers' table; it should read:\n%s", b.String())
	}
}
