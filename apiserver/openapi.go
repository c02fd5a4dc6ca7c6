package apiserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// The OpenAPI 3.1 document of GET /openapi.json is generated, never written by hand: the
// route table gives the paths, methods and who may call them, each route's op the Go types
// of its body and answer, and reflection over those wire types (internal/api) and their json
// tags the schemas. testdata/openapi.json is the committed copy (TestOpenAPIDocument).

// openAPIPath serves the document, without authentication (like /healthz).
const openAPIPath = "/openapi.json"

// authKind is how a route authenticates; the route table's wrappers set it.
type authKind int

const (
	authNone  authKind = iota // /healthz, /readyz, /metrics, /openapi.json
	authAPI                   // apiRoute: an API key, Service-Version, the rate limit
	authAdmin                 // adminRoute: the operator's admin token
	authAgent                 // /agent/connect: a tunnel credential's token
)

// op is what a route declares about itself for the document, beside its pattern.
type op struct {
	in     reflect.Type // the JSON request body; nil when the route takes none
	out    reflect.Type // the JSON body of a success; nil when it has none
	status []int        // the success statuses; nil is 200
	// list makes the answer a page of out under this member, with limit and before_id;
	// filter adds the CEL filter and query the list's own parameters.
	list   string
	filter bool
	query  []string
	// contentType is the success body's type when it is not JSON (the metrics' text).
	contentType string
	// wrapper: the body may also come as the only member of this name (a module's PUT).
	wrapper string
	// answersInTx: a POST whose handler writes once and gives its answer inside that write
	// transaction (call.answer), where its Idempotency-Key record is written too; the other
	// POSTs claim the key in a transaction of their own first (idempotency.go).
	answersInTx bool
}

// routeOp is a route's op and how it authenticates.
type routeOp struct {
	op
	auth authKind
}

var (
	created   = []int{http.StatusCreated}
	noContent = []int{http.StatusNoContent}
)

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// idPattern is the form of every object ID: its kind's prefix and a KSUID (internal/ids).
var idPattern = "^[a-z]+_[0-9A-Za-z]{" + strconv.Itoa(ids.BodyLen) + "}$"

// serveOpenAPI answers GET /openapi.json with the document New generated.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	callOf(r).writeRaw(http.StatusOK, s.openAPI)
}

// openAPIDocument generates the document of the server's route table, with the server's
// BaseURL as its server.
func (s *Server) openAPIDocument() ([]byte, error) {
	g := &openAPIGen{schemas: map[schemaKey]*openapi3.Schema{}, names: map[string]schemaKey{}, named: openapi3.Schemas{}, params: openapi3.ParametersMap{}}
	doc, err := g.document(s.opts.BaseURL, s.Routes(), s.ops)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// schemaKey names a component: a wire type in one of its forms.
type schemaKey struct {
	t    reflect.Type
	form form
}

// form is how a wire type is read. An answer always has the members without omitempty; every
// member of a request may be omitted or null (decodeBody), except those tagged required. A
// create body (POST) and an update body (PATCH) are requests too: a create also requires the
// members tagged required:"create" and offers no id (the server makes it), and a type that
// is both a family's create and update body gets a component of each form.
type form int

const (
	formResponse form = iota
	formRequest
	formCreate
	formUpdate
)

type openAPIGen struct {
	schemas map[schemaKey]*openapi3.Schema
	names   map[string]schemaKey
	// named are the components that no wire type stands for: the enums' value sets and the
	// module PUT bodies.
	named  openapi3.Schemas
	params openapi3.ParametersMap
	err    error
}

const componentPrefix = "#/components/schemas/"

func (g *openAPIGen) document(baseURL string, patterns []string, ops map[string]routeOp) (*openapi3.T, error) {
	components := openapi3.NewComponents()
	components.SecuritySchemes = openapi3.SecuritySchemes{}
	for _, a := range []authKind{authAPI, authAdmin, authAgent} {
		components.SecuritySchemes[a.scheme()] = &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
			Type: "http", Scheme: "bearer", Description: a.description(),
		}}
	}
	errorBody := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("An error (details.md §5.1): error_code is absent on a plain 404; details always holds operation_id, except on the 404 of an unknown path.").
		WithContent(openapi3.NewContentWithJSONSchemaRef(g.schema(typeOf[api.Error](), formResponse)))}
	components.Headers = responseHeaders()
	components.Responses = openapi3.ResponseBodies{"Error": errorBody}
	// The answers of API-key routes carry the rate-limit headers too, and a 429 Retry-After.
	apiError := &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(*errorBody.Value.Description).
		WithContent(errorBody.Value.Content)}
	rateLimited := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("Over the account's rate limit (ERR_226) or its cap on simultaneous requests (ERR_225); Retry-After says when to try again.").
		WithContent(errorBody.Value.Content)}
	conflict := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("A conflict; a POST whose Idempotency-Key is still being processed has Retry-After.").
		WithContent(errorBody.Value.Content)}
	reused := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The Idempotency-Key was already used for a request with another method, path or body (ERR_215): use a new key for a new request.").
		WithContent(errorBody.Value.Content)}
	unavailable := &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The database is not reachable right now (ERR_251): nothing was done; Retry-After says when to try again.").
		WithContent(errorBody.Value.Content)}
	errorBody.Value.Headers = headerRefs(hdrOperationID)
	apiError.Value.Headers = headerRefs(hdrOperationID, hdrRateLimit, hdrRateRemaining, hdrRateReset)
	rateLimited.Value.Headers = headerRefs(hdrOperationID, hdrRateLimit, hdrRateRemaining, hdrRateReset, hdrRetryAfter)
	conflict.Value.Headers = headerRefs(hdrOperationID, hdrRateLimit, hdrRateRemaining, hdrRateReset, hdrRetryAfter)
	unavailable.Value.Headers = headerRefs(hdrOperationID, hdrRateLimit, hdrRateRemaining, hdrRateReset, hdrRetryAfter)
	reused.Value.Headers = apiError.Value.Headers
	components.Responses["APIError"] = apiError
	components.Responses["RateLimited"] = rateLimited
	components.Responses["IdempotencyConflict"] = conflict
	components.Responses["IdempotencyKeyReused"] = reused
	components.Responses["StoreUnavailable"] = unavailable
	doc := &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title:       "Warren Tunnel and Edge Management API",
			Version:     api.Version,
			Description: "Generated from the route table and the wire types of the Warren API server.",
			License:     &openapi3.License{Name: "Mozilla Public License 2.0", Identifier: "MPL-2.0"},
		},
		Servers:    openapi3.Servers{{URL: baseURL}},
		Paths:      openapi3.NewPaths(),
		Components: &components,
	}
	tags := map[string]bool{}
	for _, pattern := range patterns {
		ro, ok := ops[pattern]
		if !ok {
			return nil, fmt.Errorf("route %s declares no operation", pattern)
		}
		method, path, _ := strings.Cut(pattern, " ")
		o := g.operation(method, path, ro)
		tags[o.Tags[0]] = true
		item := doc.Paths.Find(path)
		if item == nil {
			item = &openapi3.PathItem{}
			doc.Paths.Set(path, item)
		}
		item.SetOperation(method, o)
	}
	for _, name := range slices.Sorted(maps.Keys(tags)) {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: name, Description: tagDescription(name)})
	}
	components.Parameters = g.params
	components.Schemas = openapi3.Schemas{}
	for name, key := range g.names {
		components.Schemas[name] = &openapi3.SchemaRef{Value: g.schemas[key]}
	}
	for name, s := range g.named {
		if _, taken := components.Schemas[name]; taken && g.err == nil {
			g.err = fmt.Errorf("the schema name %s stands for a wire type and another component", name)
		}
		components.Schemas[name] = s
	}
	return doc, g.err
}

func (a authKind) scheme() string {
	return [...]string{"", "apiKey", "adminToken", "agentCredential"}[a]
}

func (a authKind) description() string {
	return [...]string{"",
		"An API key's token (POST /api_keys).",
		"The operator's admin token (--admin-token); the /_admin routes answer 404 without one.",
		"A tunnel credential's token (POST /credentials), for the agent's WebSocket.",
	}[a]
}

// operation describes one route.
func (g *openAPIGen) operation(method, path string, ro routeOp) *openapi3.Operation {
	o := openapi3.NewOperation()
	o.OperationID = operationID(method, path)
	o.Tags = []string{tagOf(path, ro.auth)}
	o.Summary = summary(method, path, ro.op)
	o.Security = &openapi3.SecurityRequirements{} // none: answers before authentication
	if ro.auth != authNone {
		o.Security = &openapi3.SecurityRequirements{{ro.auth.scheme(): []string{}}}
	}
	for _, seg := range strings.Split(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			schema := openapi3.NewStringSchema()
			if name == "id" || strings.HasSuffix(name, "_id") {
				schema.WithPattern(idPattern)
			}
			g.param(o, openapi3.NewPathParameter(name).WithSchema(schema))
		}
	}
	if ro.auth == authAPI {
		// A component, so that generated clients have one type for it, not one per operation.
		if _, ok := g.named["ServiceVersion"]; !ok {
			version := openapi3.NewStringSchema()
			version.Enum = []any{api.Version}
			g.named["ServiceVersion"] = version.NewRef()
		}
		version := openapi3.NewSchemaRef(componentPrefix+"ServiceVersion", g.named["ServiceVersion"].Value)
		g.shared(o, "ServiceVersion", &openapi3.Parameter{In: openapi3.ParameterInHeader, Name: api.VersionHeader, Required: true, Schema: version,
			Description: "The API version."})
		if method == http.MethodPost {
			key := openapi3.NewStringSchema().WithMaxLength(api.IdempotencyKeyMaxLen)
			g.shared(o, "IdempotencyKey", openapi3.NewHeaderParameter(api.IdempotencyKeyHeader).WithSchema(key).
				WithDescription("Runs the POST once per account and key; the first answer is replayed for 24 h with Idempotent-Replayed: true."))
		}
	}
	if ro.list != "" {
		g.shared(o, "limit", openapi3.NewQueryParameter("limit").WithSchema(openapi3.NewIntegerSchema().WithMin(1).WithMax(maxLimit)).
			WithDescription("The page size (default "+strconv.Itoa(defaultLimit)+")."))
		g.shared(o, "before_id", openapi3.NewQueryParameter("before_id").WithSchema(openapi3.NewStringSchema()).
			WithDescription("The page after this ID (next_page_uri holds it)."))
		if ro.filter {
			g.shared(o, "filter", openapi3.NewQueryParameter("filter").WithSchema(openapi3.NewStringSchema()).
				WithDescription("A CEL expression over the objects' filterable members."))
		}
		for _, q := range ro.query {
			g.param(o, openapi3.NewQueryParameter(q).WithSchema(openapi3.NewStringSchema()))
		}
	}
	if ro.in != nil {
		f := map[string]form{http.MethodPost: formCreate, http.MethodPatch: formUpdate}[method]
		if f == formResponse {
			f = formRequest
		}
		body := g.schema(ro.in, f)
		if ro.wrapper != "" {
			body = g.wrapped(ro.wrapper, body)
		}
		// Not required: an empty body stands for {} (readBody).
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
			WithContent(openapi3.NewContentWithJSONSchemaRef(body))}
	}
	statuses := ro.status
	if statuses == nil {
		statuses = []int{http.StatusOK}
	}
	o.Responses = openapi3.NewResponses()
	o.Responses.Delete("default")
	for _, st := range statuses {
		resp := openapi3.NewResponse().WithDescription(http.StatusText(st))
		switch {
		case ro.contentType != "":
			resp.WithContent(openapi3.NewContentWithSchema(openapi3.NewStringSchema(), []string{ro.contentType}))
		case ro.list != "":
			resp.WithContent(openapi3.NewContentWithJSONSchema(g.page(ro.list, ro.out)))
		case ro.out != nil:
			resp.WithContent(openapi3.NewContentWithJSONSchemaRef(g.schema(ro.out, formResponse)))
		}
		resp.Headers = headerRefs(successHeaders(method, ro.auth)...)
		o.Responses.Set(strconv.Itoa(st), &openapi3.ResponseRef{Value: resp})
	}
	// Every error has the one error body; these are the statuses the checks before the
	// handler send (version, body, authentication, rate limit), the unknown ID, and the
	// store out of reach.
	errs := map[authKind][]int{authAPI: {400, 403, 404, 429, 503}, authAdmin: {400, 403, 404, 503}, authAgent: {400, 403, 426, 503}}[ro.auth]
	if ro.auth == authAPI && method == http.MethodPost {
		errs = append(errs, http.StatusConflict, http.StatusUnprocessableEntity)
	}
	for _, st := range append(slices.Clone(errs), 0) {
		code, ref := "default", "Error"
		if st != 0 {
			code = strconv.Itoa(st)
		}
		if st == http.StatusServiceUnavailable {
			ref = "StoreUnavailable"
		}
		if ro.auth == authAPI {
			ref = map[int]string{http.StatusTooManyRequests: "RateLimited", http.StatusConflict: "IdempotencyConflict", http.StatusUnprocessableEntity: "IdempotencyKeyReused", http.StatusServiceUnavailable: "StoreUnavailable"}[st]
			if ref == "" {
				ref = "APIError"
			}
		}
		o.Responses.Set(code, &openapi3.ResponseRef{Ref: "#/components/responses/" + ref})
	}
	return o
}

// responseHeader is a response header the server sends: its key under components.headers
// and its wire name (a header object names no header: the map holding it does).
type responseHeader struct {
	key, name, description string
	schema                 func() *openapi3.Schema
	required               bool
}

// The response headers. None is required: the rate-limit headers are absent when the limit
// is off (--rate-limit 0), and the operation ID is outer's, not the handler's.
var (
	hdrOperationID   = responseHeader{"OperationId", api.OperationIDHeader, "The operation's ID, also in an error's details.", openapi3.NewStringSchema, false}
	hdrRateLimit     = responseHeader{"RateLimitLimit", rateLimitHeader, "The account's requests per 60 seconds; the rate-limit headers are absent when the server has no limit (--rate-limit 0).", seconds, false}
	hdrRateRemaining = responseHeader{"RateLimitRemaining", rateRemainingHeader, "The requests left in the account's allowance.", seconds, false}
	hdrRateReset     = responseHeader{"RateLimitReset", rateResetHeader, "Seconds until the allowance is whole again.", seconds, false}
	hdrRetryAfter    = responseHeader{"RetryAfter", retryAfterHeader, "Seconds to wait before retrying.", seconds, false}
	hdrReplayed      = responseHeader{"IdempotentReplayed", api.IdempotentReplayedHeader, "The answer is the replay of the first request with the same Idempotency-Key.", func() *openapi3.Schema {
		s := openapi3.NewStringSchema()
		s.Enum = []any{"true"}
		return s
	}, false}
	allResponseHeaders = []responseHeader{hdrOperationID, hdrRateLimit, hdrRateRemaining, hdrRateReset, hdrRetryAfter, hdrReplayed}
)

// seconds is a whole non-negative number (a count or seconds).
func seconds() *openapi3.Schema { return openapi3.NewIntegerSchema().WithMin(0) }

func (h responseHeader) header() *openapi3.Header {
	return &openapi3.Header{Parameter: openapi3.Parameter{Description: h.description, Schema: h.schema().NewRef(), Required: h.required}}
}

// responseHeaders are components.headers.
func responseHeaders() openapi3.Headers {
	out := openapi3.Headers{}
	for _, h := range allResponseHeaders {
		out[h.key] = &openapi3.HeaderRef{Value: h.header()}
	}
	return out
}

// successHeaders are the headers of a route's success answers.
func successHeaders(method string, auth authKind) []responseHeader {
	out := []responseHeader{hdrOperationID}
	if auth == authAPI {
		out = append(out, hdrRateLimit, hdrRateRemaining, hdrRateReset)
		if method == http.MethodPost {
			out = append(out, hdrReplayed)
		}
	}
	return out
}

// headerRefs refers to components.headers, under the headers' wire names.
func headerRefs(hs ...responseHeader) openapi3.Headers {
	out := openapi3.Headers{}
	for _, h := range hs {
		out[h.name] = &openapi3.HeaderRef{Ref: "#/components/headers/" + h.key, Value: h.header()}
	}
	return out
}

func (g *openAPIGen) param(o *openapi3.Operation, p *openapi3.Parameter) {
	o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: p})
}

// shared adds a parameter that many operations have, once under components.
func (g *openAPIGen) shared(o *openapi3.Operation, name string, p *openapi3.Parameter) {
	if _, ok := g.params[name]; !ok {
		g.params[name] = &openapi3.ParameterRef{Value: p}
	}
	o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/" + name, Value: g.params[name].Value})
}

// page is the list envelope of api.md: the items under member, the list's uri and the next
// page's uri, null on the last page (writeList).
func (g *openAPIGen) page(member string, item reflect.Type) *openapi3.Schema {
	items := openapi3.NewArraySchema()
	items.Items = g.schema(item, formResponse)
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{
		member:          items.NewRef(),
		"uri":           openapi3.NewStringSchema().NewRef(),
		"next_page_uri": nullable(openapi3.NewStringSchema().NewRef()),
	}
	s.Required = []string{member, "next_page_uri", "uri"}
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	return s
}

// operationID is the method and the path's words: "get_edges_https_edge_id_routes_id".
func operationID(method, path string) string {
	id := strings.ToLower(method)
	for w := range strings.FieldsFuncSeq(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		id += "_" + w
	}
	return id
}

// tagOf groups a route with its collection: the path up to its first wildcard.
func tagOf(path string, auth authKind) string {
	switch auth {
	case authAdmin:
		return "admin"
	case authNone:
		return "operations"
	case authAgent:
		return "agents"
	}
	head, _, _ := strings.Cut(path, "/{")
	return strings.TrimPrefix(head, "/")
}

// tagDescription says what a tag's operations are about.
func tagDescription(tag string) string {
	switch tag {
	case "admin":
		return "The operator's routes, with the admin token."
	case "operations":
		return "Health, readiness, metrics, this document and the SAML service provider, without credentials."
	case "agents":
		return "The agents' WebSocket, with a tunnel credential."
	}
	return "The objects under /" + tag + " and their sub-resources."
}

func summary(method, path string, o op) string {
	verb := map[string]string{"POST": "Create", "GET": "Get", "PATCH": "Update", "PUT": "Replace", "DELETE": "Delete"}[method]
	switch {
	case o.list != "":
		verb = "List"
	case method == http.MethodPost && !slices.Equal(o.status, created):
		verb = "Run"
	}
	return verb + " " + path
}

var (
	timeType      = typeOf[time.Time]()
	marshalerType = typeOf[json.Marshaler]()
)

// schema is the schema of a Go type as encoding/json writes it: named structs become
// components, referenced; the nullability of pointers is the member's (object).
func (g *openAPIGen) schema(t reflect.Type, f form) *openapi3.SchemaRef {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return openapi3.NewDateTimeSchema().NewRef()
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return openapi3.NewSchemaRef("", &openapi3.Schema{}) // any JSON (json.RawMessage)
	}
	switch t.Kind() {
	case reflect.String:
		return openapi3.NewStringSchema().NewRef()
	case reflect.Bool:
		return openapi3.NewBoolSchema().NewRef()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return openapi3.NewInt32Schema().NewRef()
	case reflect.Int64, reflect.Uint64:
		return openapi3.NewInt64Schema().NewRef()
	case reflect.Float32, reflect.Float64:
		return openapi3.NewFloat64Schema().NewRef()
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return openapi3.NewBytesSchema().NewRef()
		}
		s := openapi3.NewArraySchema()
		s.Items = g.schema(t.Elem(), f.nested())
		return s.NewRef()
	case reflect.Map:
		s := openapi3.NewObjectSchema()
		s.AdditionalProperties = openapi3.AdditionalProperties{Schema: g.schema(t.Elem(), f.nested())}
		return s.NewRef()
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t, f).NewRef()
		}
		return g.component(t, f)
	}
	return openapi3.NewSchemaRef("", &openapi3.Schema{})
}

// nested is the form of the values inside a body: a request's members are requests of
// their own, whatever the body.
func (f form) nested() form {
	if f == formResponse {
		return formResponse
	}
	return formRequest
}

// component returns a reference to the component of a named struct, generating it once.
// A request form is named after its type when that says so (…Create, …Update, …Request,
// …Input), else with "Request" added, so that both forms of a type can be components; the
// update form of a …Create type is named …Update.
func (g *openAPIGen) component(t reflect.Type, f form) *openapi3.SchemaRef {
	f = distinct(t, f)
	key := schemaKey{t, f}
	name := t.Name()
	switch {
	case f == formUpdate && strings.HasSuffix(name, "Create"):
		name = strings.TrimSuffix(name, "Create") + "Update"
	case f != formResponse && !strings.HasSuffix(name, "Create") && !strings.HasSuffix(name, "Update") && !strings.HasSuffix(name, "Request") && !strings.HasSuffix(name, "Input"):
		name += "Request"
	}
	if s, ok := g.schemas[key]; ok {
		return openapi3.NewSchemaRef(componentPrefix+name, s)
	}
	if other, taken := g.names[name]; taken && g.err == nil {
		g.err = fmt.Errorf("the schema name %s stands for %v and %v", name, other.t, t)
	}
	s := &openapi3.Schema{}
	g.schemas[key], g.names[name] = s, key // before its members, which may refer back to it
	*s = *g.object(t, f)
	return openapi3.NewSchemaRef(componentPrefix+name, s)
}

// distinct is f, or the request form when the type reads the same in both: a create body
// with no id and no member required only on create (EventSourceCreate, also a member of
// EventSubscriptionCreate), an update body that is no …Create type.
func distinct(t reflect.Type, f form) form {
	switch f {
	case formCreate:
		differs := false
		wireFields(t, func(name string, _ bool, sf reflect.StructField) {
			differs = differs || name == "id" || sf.Tag.Get("required") == "create"
		})
		if !differs {
			return formRequest
		}
	case formUpdate:
		if !strings.HasSuffix(t.Name(), "Create") {
			return formRequest
		}
	}
	return f
}

// wrapped is the component of a module's PUT body: the module itself, or the module as the
// only member of wrapper. It is named (ToggleModulePut) so that generated clients get a
// type of their own for the union, which they marshal whole.
func (g *openAPIGen) wrapped(wrapper string, module *openapi3.SchemaRef) *openapi3.SchemaRef {
	name := strings.TrimSuffix(strings.TrimPrefix(module.Ref, componentPrefix), "Request") + "Put"
	if _, ok := g.named[name]; !ok {
		inner := openapi3.NewObjectSchema().WithPropertyRef(wrapper, module)
		inner.Required = []string{wrapper}
		inner.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
		union := &openapi3.Schema{AnyOf: openapi3.SchemaRefs{module, inner.NewRef()},
			Description: "The module, or the module as the only member " + strconv.Quote(wrapper) + "."}
		g.named[name] = union.NewRef()
	}
	return openapi3.NewSchemaRef(componentPrefix+name, g.named[name].Value)
}

// object is the schema of a struct's JSON members, embedded structs' members inline as
// encoding/json writes them. An answer has every member without omitempty (required), and a
// pointer, slice or map member without omitempty may be null; a request may omit any member
// or give it null (decodeBody). No other members are sent or accepted.
func (g *openAPIGen) object(t reflect.Type, fm form) *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	request := fm != formResponse
	wireFields(t, func(name string, omitempty bool, f reflect.StructField) {
		if fm == formCreate && name == "id" {
			return // the server makes the ID; one given is ignored
		}
		ft := f.Type
		member := g.schema(ft, fm.nested())
		if e := f.Tag.Get("enum"); e != "" {
			member = g.enum(t, name, e, member)
		}
		if request {
			limit(name, member)
		}
		// A request member tagged required is one the server refuses when missing, empty or
		// null, with the member's "required" error; required:"create" only on create.
		tag := f.Tag.Get("required")
		required := request && (tag == "true" || tag == "create" && fm == formCreate)
		// encoding/json writes a nil pointer, slice or map as null unless omitempty drops it.
		if k := ft.Kind(); request && !required || (!request && !omitempty && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map)) {
			member = nullable(member)
		}
		s.Properties[name] = member
		if !request && !omitempty || required {
			s.Required = append(s.Required, name)
		}
	})
	return s
}

// wireFields calls visit for each JSON member of struct t, in order.
func wireFields(t reflect.Type, visit func(name string, omitempty bool, f reflect.StructField)) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				wireFields(ft, visit)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		visit(name, omit, f)
	}
}

// enum closes a string member, or a list of strings' items, to the value set its enum tag
// names in rules.Enums (the table the server's check uses), a component named after the set
// (match_type is MatchType): a nullable member refers to it beside null, so that generated
// clients get its constants and no constant for null.
func (g *openAPIGen) enum(t reflect.Type, member, name string, s *openapi3.SchemaRef) *openapi3.SchemaRef {
	values, ok := rules.Enums[name]
	list := s.Value != nil && s.Value.Type.Is(openapi3.TypeArray) && s.Value.Items != nil
	target := s
	if list {
		target = s.Value.Items
	}
	if !ok || target.Ref != "" || target.Value == nil || !target.Value.Type.Is(openapi3.TypeString) {
		if g.err == nil {
			g.err = fmt.Errorf("%v.%s: the enum %q is not a value set of rules.Enums over a string member", t, member, name)
		}
		return s
	}
	component := camel(name)
	if _, ok := g.named[component]; !ok {
		set := openapi3.NewStringSchema()
		for _, v := range values {
			set.Enum = append(set.Enum, v)
		}
		g.named[component] = set.NewRef()
	}
	ref := openapi3.NewSchemaRef(componentPrefix+component, g.named[component].Value)
	if list {
		s.Value.Items = ref
		return s
	}
	return ref
}

// camel writes a snake_case name in CamelCase.
func camel(name string) string {
	var b strings.Builder
	for word := range strings.SplitSeq(name, "_") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// textLimits are the request members whose length the server bounds, by member name, in
// bytes (rules.DescriptionMetadata); maxLength counts characters, so it is the bound of an
// ASCII text and the server's byte count decides.
var textLimits = map[string]int{
	"description": rules.MaxDescriptionBytes,
	"metadata":    rules.MaxMetadataBytes,
}

// limit bounds a request member's length as the server does.
func limit(member string, s *openapi3.SchemaRef) {
	if n, ok := textLimits[member]; ok && s.Ref == "" && s.Value.Type.Is(openapi3.TypeString) {
		s.Value.WithMaxLength(int64(n))
	}
}

// nullable lets a schema be null too: ["string", "null"] for a plain type, anyOf with null
// for a reference (JSON Schema 2020-12, as OpenAPI 3.1 has it).
func nullable(s *openapi3.SchemaRef) *openapi3.SchemaRef {
	if s.Ref == "" && s.Value.Type != nil && len(*s.Value.Type) > 0 {
		if !s.Value.Type.Includes(openapi3.TypeNull) {
			types := append(slices.Clone(*s.Value.Type), openapi3.TypeNull)
			s.Value.Type = &types
		}
		return s
	}
	if s.Ref == "" && s.Value.Type == nil && s.Value.AnyOf == nil {
		return s // any JSON already admits null
	}
	null := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}}
	return (&openapi3.Schema{AnyOf: openapi3.SchemaRefs{s, null.NewRef()}}).NewRef()
}
