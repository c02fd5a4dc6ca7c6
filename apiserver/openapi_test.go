package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// openAPIFile is the committed OpenAPI document, generated for this fixed server URL.
const (
	openAPIFile      = "testdata/openapi.json"
	openAPIServerURL = "http://warren.test"
)

// TestOpenAPIDocument pins GET /openapi.json in testdata/openapi.json: served without
// authentication as JSON, a valid OpenAPI 3.1 document (kin-openapi's loader and Validate,
// schemas checked as JSON Schema 2020-12) with an operation for every route of the route
// table. Regenerate with: go test ./apiserver -run TestOpenAPIDocument -update
func TestOpenAPIDocument(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warren.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := apiserver.New(ctx, apiserver.Options{Store: db, BaseURL: openAPIServerURL, BootstrapAPIKey: ids.NewToken(ids.New(ids.APIKey))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	req, _ := http.NewRequest("GET", openAPIServerURL+"/openapi.json", nil) // no Authorization, no Service-Version
	rec := &recorder{header: http.Header{}}
	srv.ServeHTTP(rec, req)
	if rec.status != 200 || rec.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %q: %s", rec.status, rec.header.Get("Content-Type"), rec.body.String())
	}
	got := rec.body.String()
	if *update {
		if err := os.WriteFile(openAPIFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("GET /openapi.json differs from %s; if the API changed, run: go test ./apiserver -run TestOpenAPIDocument -update", openAPIFile)
	}

	doc, err := openapi3.NewLoader().LoadFromData(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the document is not valid: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() || doc.Servers[0].URL != openAPIServerURL {
		t.Fatalf("openapi %q, servers %v", doc.OpenAPI, doc.Servers)
	}
	routes, err := os.ReadFile("testdata/routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, route := range strings.Fields(strings.ReplaceAll(string(routes), " ", "_")) {
		method, path, _ := strings.Cut(route, "_")
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s %s has no operation in the document", method, path)
		}
		ops++
	}
	for _, item := range doc.Paths.Map() {
		ops -= len(item.Operations())
	}
	if ops != 0 {
		t.Errorf("the document has %d operations more than the route table", -ops)
	}

	// Spot checks that the schemas say what the wire has.
	key := doc.Components.Schemas["APIKey"].Value
	if !key.Properties["created_at"].Value.Type.Is("string") || !slices.Contains(key.Required, "created_at") || !key.Properties["token"].Value.Type.Includes("null") {
		t.Errorf("APIKey: %+v", key)
	}
	list := doc.Paths.Value("/api_keys").Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if list.Properties["keys"].Value.Items.Ref != "#/components/schemas/APIKey" || !list.Properties["next_page_uri"].Value.Type.Includes("null") {
		t.Errorf("the api_keys page: %+v", list.Properties)
	}
	if doc.Paths.Value("/healthz").Get.Security == nil || len(*doc.Paths.Value("/healthz").Get.Security) != 0 {
		t.Errorf("/healthz must need no authentication")
	}

	// As generators read it: a create and an update schema of their own, the module PUT union
	// and the value sets as named components, null beside a value set rather than in it.
	schemas := doc.Components.Schemas
	create, update := schemas["StaticBackendCreate"].Value, schemas["StaticBackendUpdate"].Value
	if !slices.Equal(create.Required, []string{"address"}) || create.Properties["id"] != nil || len(update.Required) != 0 || update.Properties["id"] == nil {
		t.Errorf("StaticBackendCreate requires %v (id: %v), StaticBackendUpdate %v", create.Required, create.Properties["id"] != nil, update.Required)
	}
	bodyRef := func(method, path string) string {
		return doc.Paths.Value(path).GetOperation(method).RequestBody.Value.Content.Get("application/json").Schema.Ref
	}
	if got := bodyRef("PATCH", "/backends/static/{id}"); got != "#/components/schemas/StaticBackendUpdate" {
		t.Errorf("PATCH /backends/static/{id} takes %s", got)
	}
	if got := bodyRef("PUT", "/edges/https/{edge_id}/routes/{id}/compression"); got != "#/components/schemas/ToggleModulePut" || len(schemas["ToggleModulePut"].Value.AnyOf) != 2 {
		t.Errorf("PUT compression takes %s", got)
	}
	if slices.Contains(schemas["MatchType"].Value.Enum, nil) {
		t.Errorf("MatchType: %v", schemas["MatchType"].Value.Enum)
	}
	if m := schemas["HTTPSEdgeRouteUpdate"].Value.Properties["match_type"].Value; len(m.AnyOf) != 2 || m.AnyOf[0].Ref != "#/components/schemas/MatchType" || !m.AnyOf[1].Value.Type.Is("null") {
		t.Errorf("HTTPSEdgeRouteUpdate.match_type: %+v", m)
	}
	if d := create.Properties["description"].Value; d.MaxLength == nil || *d.MaxLength != 255 {
		t.Errorf("StaticBackendCreate.description: %+v", d)
	}
	post := doc.Paths.Value("/api_keys").Post
	if post.Responses.Status(422) == nil || post.Responses.Status(422).Ref != "#/components/responses/IdempotencyKeyReused" {
		t.Errorf("POST /api_keys does not list the 422 of a reused Idempotency-Key")
	}
	id := doc.Paths.Value("/api_keys/{id}").Get.Parameters.GetByInAndName("path", "id").Schema.Value
	if !regexp.MustCompile(id.Pattern).MatchString(ids.New(ids.APIKey)) || regexp.MustCompile(id.Pattern).MatchString("ak_x") {
		t.Errorf("the id parameter's pattern %q", id.Pattern)
	}

	// Each server names itself: its BaseURL is the document's server.
	c := newTC(t)
	served := c.req("GET", "/openapi.json", nil, "Authorization", "", "Service-Version", "")
	if served.status != 200 || served.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %s", served.status, served.raw)
	}
	servers, _ := served.body["servers"].([]any)
	equal(t, "servers", servers, []any{map[string]any{"url": c.srv.URL}})
}

// recorder is a minimal http.ResponseWriter for calling the server's handler directly.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int)   { r.status = s }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return r.body.Write(b)
}

// openAPI is the committed document, loaded once for checking every answer of the handler
// tests, and a mux of its operations to find the one a request names.
var openAPI = sync.OnceValues(func() (*openapi3.T, error) {
	data, err := os.ReadFile(openAPIFile)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

var openAPIMux = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	doc, err := openAPI()
	if err != nil {
		return mux
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			mux.HandleFunc(method+" "+path, func(http.ResponseWriter, *http.Request) {})
		}
	}
	return mux
})

// checkOpenAPI fails the test unless the server's answer to req matches the document: the
// operation's response for its status (or the error body for an error), its content type
// and its schema. An answer to a request no operation describes (an unknown path, the wrong
// method) must be the error body.
func checkOpenAPI(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	doc, err := openAPI()
	if err != nil {
		t.Fatalf("loading %s: %v", openAPIFile, err)
	}
	_, pattern := openAPIMux().Handler(req)
	method, path, _ := strings.Cut(pattern, " ")
	var operation *openapi3.Operation
	if item := doc.Paths.Value(path); item != nil && method == req.Method {
		operation = item.GetOperation(method)
	}
	if operation == nil {
		if status < 400 {
			return // a CORS preflight, answered before the routes
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s %s: %d answer is not JSON: %q", req.Method, req.URL.Path, status, body)
		}
		if err := doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Fatalf("%s %s: the %d answer is not the error body of the OpenAPI document: %v\n%s", req.Method, req.URL.Path, status, err, body)
		}
		return
	}
	route := &routers.Route{Spec: doc, Path: path, PathItem: doc.Paths.Value(path), Method: method, Operation: operation}
	if rb := operation.RequestBody; status < 300 && req.GetBody != nil && rb != nil {
		// The server accepted the body, so the document must accept it too: a member it
		// calls required, or a value set it closes, that the server does without is wrong.
		body, _ := req.GetBody()
		data, _ := io.ReadAll(body)
		var v any
		if len(data) > 0 && json.Unmarshal(data, &v) == nil {
			if err := rb.Value.Content.Get("application/json").Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
				t.Fatalf("%s %s: the server accepted (%d) a body the OpenAPI document refuses (%s %s): %v\n%s", req.Method, req.URL.Path, status, method, path, err, data)
			}
		}
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req,
			Route:   route,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		t.Fatalf("%s %s: the %d answer does not match the OpenAPI document (%s %s): %v\n%s", req.Method, req.URL.Path, status, method, path, err, body)
	}
}

// TestOpenAPIChecksAnswers shows that the check of every answer rejects what the document
// does not allow: a missing or an extra member, a wrong type, an undeclared content type,
// and a body other than the error body on a path no route serves.
func TestOpenAPIChecksAnswers(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://warren.test/api_keys/ak_x", nil)
	unknown, _ := http.NewRequest("GET", "http://warren.test/no_such_thing", nil)
	key := `{"id":"ak_x","uri":"u","created_at":"2030-01-01T00:00:00Z","description":"","metadata":"","owner_id":"usr_x","token":null}`
	jsonType := http.Header{"Content-Type": {"application/json"}}
	for _, tt := range []struct {
		name   string
		req    *http.Request
		status int
		header http.Header
		body   string
		ok     bool
	}{
		{"the object", get, 200, jsonType, key, true},
		{"an error", get, 404, jsonType, `{"status_code":404,"msg":"Resource not found","details":{"operation_id":"op_x"}}`, true},
		{"a member missing", get, 200, jsonType, strings.Replace(key, `"owner_id":"usr_x",`, "", 1), false},
		{"a member more", get, 200, jsonType, strings.Replace(key, `"token":null`, `"token":null,"secret":"s"`, 1), false},
		{"a wrong type", get, 200, jsonType, strings.Replace(key, `"metadata":""`, `"metadata":1`, 1), false},
		{"not JSON", get, 200, http.Header{"Content-Type": {"text/plain"}}, key, false},
		{"an error without its status", get, 404, jsonType, `{"msg":"Resource not found","details":{}}`, false},
		{"an unknown path's error", unknown, 404, jsonType, `{"status_code":404,"msg":"Resource not found","details":{"path":"/no_such_thing"}}`, true},
		{"an unknown path's other body", unknown, 404, jsonType, `{"oops":true}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &fatalRecorder{TB: t}
			func() {
				defer func() {
					if p := recover(); p != nil && p != errFatal {
						panic(p)
					}
				}()
				checkOpenAPI(rec, tt.req, tt.status, tt.header, []byte(tt.body))
			}()
			if rec.failed == tt.ok {
				t.Fatalf("checkOpenAPI failed: %v, want %v: %s", rec.failed, !tt.ok, rec.msg)
			}
		})
	}
}

// fatalRecorder records a Fatalf instead of ending the test, to test a checker.
type fatalRecorder struct {
	testing.TB
	failed bool
	msg    string
}

var errFatal = errors.New("fatal")

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	panic(errFatal)
}

// TestOpenAPIRequiredMembers shows that the members the document calls required are the
// server's: a create without them is refused with 400, naming one of them, and changes
// nothing. Every route whose body has required members is covered.
func TestOpenAPIRequiredMembers(t *testing.T) {
	doc, err := openAPI()
	if err != nil {
		t.Fatal(err)
	}
	c := newTC(t)
	covered := 0
	for path, item := range doc.Paths.Map() {
		o := item.Post
		if o == nil || o.RequestBody == nil || strings.Contains(path, "{") {
			continue
		}
		required := o.RequestBody.Value.Content.Get("application/json").Schema.Value.Required
		if len(required) == 0 {
			continue
		}
		covered++
		r := c.req("POST", path, map[string]any{})
		details, _ := r.body["details"].(map[string]any)
		if r.status != 400 || !slices.Contains(required, str(details["param"])) {
			t.Errorf("POST %s {}: %d %s, want 400 naming one of %v", path, r.status, r.raw, required)
		}
		list := c.ok(200, "GET", path, nil)
		for member, v := range list {
			if items, ok := v.([]any); ok && len(items) != 0 {
				t.Errorf("GET %s after the refused create: %d %s", path, len(items), member)
			}
		}
	}
	if covered == 0 {
		t.Fatal("no create has required members")
	}
}
