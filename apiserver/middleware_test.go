package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

func newTestServer(t *testing.T, log *zap.Logger) (*Server, string) {
	if log == nil {
		log = zap.NewNop()
	}
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	token := ids.NewToken(ids.New(ids.APIKey))
	s, err := New(context.Background(), Options{Store: db, BaseURL: "http://warren.test", BootstrapAPIKey: token, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, token
}

func TestPanicIsRecoveredAsAnOpaque500(t *testing.T) {
	s, _ := newTestServer(t, zap.NewNop())
	h := s.outer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	var body api.Error
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 500 || body.StatusCode != 500 || body.Msg != "internal server error" || !strings.HasPrefix(body.Details["operation_id"], "op_") {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "boom") {
		t.Fatal("the panic value leaked into the response")
	}
}

// TestLogsCarryNoSecrets sends requests full of tokens and checks no log field holds one.
func TestLogsCarryNoSecrets(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	s, token := newTestServer(t, zap.New(core))
	logs.TakeAll() // the bootstrap's store lines belong to no request
	do := func(method, path, body, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+auth)
		req.Header.Set("Service-Version", "2")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	created := do("POST", "/api_keys", `{"description":"x"}`, token)
	var key api.APIKey
	_ = json.Unmarshal(created.Body.Bytes(), &key)
	do("GET", "/api_keys", "", *key.Token)
	do("GET", "/api_keys", "", "notarealtoken")
	do("POST", "/credentials", `{}`, token)

	if logs.Len() < 4 {
		t.Fatalf("expected an access log line per request, got %d", logs.Len())
	}
	for _, entry := range logs.All() {
		line, _ := json.Marshal(entry.ContextMap())
		for _, secret := range []string{token, *key.Token, "notarealtoken"} {
			if strings.Contains(string(line)+entry.Message, secret) {
				t.Fatalf("log line carries a secret: %s", line)
			}
		}
		if entry.ContextMap()["operation_id"] == nil {
			t.Fatalf("log line without operation id: %s", line)
		}
	}
}

// TestInternalErrorIsLoggedAtErrorLevel: a 5xx access line is at error level, beside the
// line with the error itself; neither reaches the response.
func TestInternalErrorIsLoggedAtErrorLevel(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	s, _ := newTestServer(t, zap.New(core))
	h := s.outer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		callOf(r).writeError(errors.New("disk on fire"))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "disk on fire") {
		t.Fatalf("got %d %s", rec.Code, rec.Body)
	}
	internal := logs.FilterMessage("internal error").AllUntimed()
	access := logs.FilterMessage("request").AllUntimed()
	if len(internal) != 1 || internal[0].Level != zap.ErrorLevel || len(access) != 1 || access[0].Level != zap.ErrorLevel || access[0].ContextMap()["status"] != int64(500) {
		t.Fatalf("logs %v, want the internal error and a 500 access line at error level", logs.AllUntimed())
	}
	if _, ok := access[0].ContextMap()["error_code"]; ok {
		t.Fatal("an opaque 500 has no error code to log")
	}
}
