package edge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// TestBrokenObjectServesItsErrorOnly: a stored edge that does not compile (here a
// min_version no TLS has, written past the API) answers 500 ERR_8007, logged; the other
// edges keep serving.
func TestBrokenObjectServesItsErrorOnly(t *testing.T) {
	e := newEnv(t)
	brokenID := e.edgeWith("broken.example.test", nil, e.fixed("never"), nil)
	e.edgeWith("sound.example.test", nil, e.fixed("sound"), nil)
	err := e.srv.Store.Write(t.Context(), func(tx store.Tx) error {
		o, err := tx.Get(t.Context(), "https_edge", brokenID)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(o.Doc, &doc); err != nil {
			return err
		}
		doc["tls_termination"] = map[string]any{"enabled": true, "terminate_at": "edge", "min_version": "9.9"}
		o.Doc, _ = json.Marshal(doc)
		return tx.Update(t.Context(), o)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.expectPage(e.client(), "https://broken.example.test/", http.StatusInternalServerError, "ERR_8007")
	if status, body, _ := e.get(e.client(), "https://sound.example.test/"); status != 200 || body != "sound" {
		t.Fatalf("the sound edge: %d %q", status, body)
	}
	if e.logs.FilterMessageSnippet("does not compile").FilterField(zap.String("id", brokenID)).Len() == 0 {
		t.Fatal("the broken edge was not logged")
	}
}

// TestHeaderLimit: request headers beyond the limit are refused (431), not read on.
func TestHeaderLimit(t *testing.T) {
	e := newEnv(t, func(o *edge.Options) { o.MaxHeaderBytes = 4 << 10 })
	e.edgeWith("big.example.test", nil, e.fixed("small"), nil)
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "https://big.example.test/", nil)
	req.Header.Set("X-Big", strings.Repeat("x", 64<<10))
	resp, err := e.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("64 KiB of headers: %d", resp.StatusCode)
	}
}
