package apiserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlite"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// retryStep is one request of TestRetriedWrites: a route of testdata/routes.txt (or a
// DELETE that makes room for the next module) and its body. Placeholders: {id} is the object
// the route's collection created last, {edge_id} the HTTPS edge, {account_id} the bootstrap
// account, {type} the subscription's first source; in bodies, the fuzzCreates ones.
type retryStep struct {
	route  string // "POST /ip_policies"
	body   string
	key    bool // sent with an Idempotency-Key
	status int  // what both servers answer
	reads  bool // the route writes nothing (a source has no members to change)
}

// Event destinations of every target kind, each holding its secret.
var retryDestinations = []string{
	`{"format":"json","target":{"data_stream":{"auth":{"creds":{"access_key_id":"AKIAEXAMPLE","secret_access_key":"s1"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}}`,
	`{"format":"json","target":{"delivery_stream":{"auth":{"creds":{"access_key_id":"AKIAEXAMPLE","secret_access_key":"s2"}},"delivery_stream_arn":"arn:aws:firehose:us-east-1:123456789012:deliverystream/audit"}}}`,
	`{"format":"json","target":{"log_group":{"auth":{"creds":{"access_key_id":"AKIAEXAMPLE","secret_access_key":"s3"}},"log_group_arn":"arn:aws:logs:eu-west-1:123456789012:log-group:audit"}}}`,
	`{"format":"json","target":{"cloud_logs_ingestion":{"tenant_id":"72f988bf-86f1-41af-91ab-2d7cd011db47","client_id":"0b5a3b8e-3c5e-4f6e-9c1d-2a3b4c5d6e7f","client_secret":"s4","logs_ingestion_uri":"https://dce.ingest.example.com","data_collection_rule_id":"dcr-00000000000000000000000000000000","data_collection_stream_name":"Custom-Events"}}}`,
	`{"format":"json","target":{"observability":{"api_key":"s5","site":"datadoghq.com","service":"warren","tags":"env:prod"}}}`,
}

// retrySteps lists the requests: every create (keyed, as the provider sends them), the
// destinations of every kind plain and keyed, then every PATCH, module PUT and other POST.
func retrySteps(t testing.TB) []retryStep {
	var steps []retryStep
	for _, c := range fuzzCreates {
		steps = append(steps, retryStep{route: "POST " + c.path, body: c.body, key: true, status: 201})
	}
	for _, d := range retryDestinations {
		steps = append(steps, retryStep{route: "POST /event_destinations", body: d, status: 201},
			retryStep{route: "POST /event_destinations", body: d, key: true, status: 201})
	}
	patched := `{"description":"patched"}`
	modules := map[string]string{
		"backend":                 `{"backend_id":"{bkd}"}`,
		"ip_restriction":          `{"ip_policy_ids":["{ipp}"]}`,
		"mutual_tls":              `{"certificate_authority_ids":["{ca_id}"]}`,
		"tls_termination":         `{"min_version":"1.2"}`,
		"circuit_breaker":         `{"error_threshold_percentage":0.5}`,
		"compression":             `{}`,
		"request_headers":         `{"add":{"X-Env":"prod"}}`,
		"response_headers":        `{"remove":["server"]}`,
		"webhook_verification":    `{"provider":"TWILIO","secret":"whsec-route-secret"}`,
		"websocket_tcp_converter": `{"enabled":false}`,
		"user_agent_filter":       `{"deny":["(?i)bot"]}`,
		"oauth":                   `{"provider":{"google":{}}}`,
		"oidc":                    `{"issuer":"https://idp.example.com","client_id":"cid","client_secret":"oidc-client-secret"}`,
		"saml":                    `{"idp_metadata":"{saml}"}`,
	}
	for _, r := range routeLines(t) {
		method, path, _ := strings.Cut(r, " ")
		module := path[strings.LastIndex(path, "/")+1:]
		switch {
		case strings.HasPrefix(path, "/saml/"):
			// The edge's SAML service provider (none on this server): it writes nothing.
			steps = append(steps, retryStep{route: r, status: 404, reads: true})
		case method == "PATCH" && strings.HasSuffix(path, "/sources/{type}"):
			steps = append(steps, retryStep{route: r, body: `{}`, status: 200, reads: true})
		case method == "PATCH" && path == "/event_destinations/{id}":
			// A new target with its secret, then one that keeps the stored secret.
			steps = append(steps, retryStep{route: r, body: `{"target":{"observability":{"api_key":"s6","site":"datadoghq.eu","service":"warren","tags":""}}}`, status: 200},
				retryStep{route: r, body: `{"description":"patched","target":{"observability":{"api_key":"","site":"datadoghq.com","service":"warren","tags":""}}}`, status: 200})
		case method == "PATCH" && (path == "/bot_users/{id}" || path == "/service_users/{id}"):
			steps = append(steps, retryStep{route: r, body: `{"name":"patched` + path[1:4] + `"}`, status: 200})
		case method == "PATCH":
			steps = append(steps, retryStep{route: r, body: patched, status: 200})
		case method == "PUT" && module == "traffic_policy":
			policy := `{"value":` + mustJSON(httpPolicy) + `}`
			if !strings.HasPrefix(path, "/edges/https/") {
				policy = `{"value":` + mustJSON(tcpPolicy) + `}`
			}
			steps = append(steps, retryStep{route: r, body: policy, status: 200})
		case method == "PUT" && (module == "oauth" || module == "oidc"):
			// One identity module at a time on a route.
			steps = append(steps, retryStep{route: r, body: modules[module], status: 200},
				retryStep{route: "DELETE " + path, status: 204})
		case method == "PUT":
			steps = append(steps, retryStep{route: r, body: modules[module], status: 200})
		}
	}
	steps = append(steps,
		retryStep{route: "POST /event_subscriptions/{id}/sources", body: `{"type":"ip_policy_updated.v0"}`, key: true, status: 201},
		retryStep{route: "POST /_admin/accounts", body: `{"name":"retried"}`, status: 201},
		retryStep{route: "POST /_admin/accounts/{account_id}/users", body: `{"email":"retried@example.com","role":"member"}`, status: 201},
		// The server's own account, enabled again at once for the steps after.
		retryStep{route: "POST /_admin/accounts/{account_id}/disable", body: `{}`, status: 200},
		retryStep{route: "POST /_admin/accounts/{account_id}/enable", body: `{}`, status: 200},
	)
	// No agent runs: the commands meet an unknown session, the keyed claim still writes.
	for _, cmd := range []string{"restart", "stop", "update"} {
		steps = append(steps, retryStep{route: "POST /tunnel_sessions/{id}/" + cmd, body: `{}`, key: true, status: 404})
	}
	return steps
}

// routeLines returns the lines of testdata/routes.txt that take a body (POST, PATCH, PUT).
func routeLines(t testing.TB) []string {
	file, err := os.Open("testdata/routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []string
	for sc := bufio.NewScanner(file); sc.Scan(); {
		if method, _, _ := strings.Cut(sc.Text(), " "); method == "POST" || method == "PATCH" || method == "PUT" {
			out = append(out, sc.Text())
		}
	}
	return out
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// TestRetriedWrites runs every create, PATCH, module PUT and other POST through a store
// whose every write transaction fails once, where it would commit, with the database's own
// serialization failure (so the store runs it again, as when concurrent writers conflict),
// and through a plain store: the answers are the same (IDs, times, tokens and keys
// aside), and every write of the retried server did run twice. A write attempt must never
// change the request it was given: the second would then check what the first left.
func TestRetriedWrites(t *testing.T) {
	steps := retrySteps(t)
	covered := map[string]bool{}
	for _, s := range steps {
		covered[s.route] = true
	}
	for _, r := range routeLines(t) {
		if !covered[r] {
			t.Errorf("%s has no step in retrySteps", r)
		}
	}
	if t.Failed() {
		return
	}
	sqliteAt := func(t *testing.T) apiservertest.Opener {
		return func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
			return sqlite.Open(ctx, filepath.Join(t.TempDir(), "warren.db"), seal)
		}
	}
	postgresAt := func(t *testing.T) apiservertest.Opener {
		dsn := pgcluster.Database(t)
		return func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
			return postgres.Open(ctx, dsn, seal)
		}
	}
	for _, db := range []struct {
		name    string
		open    func(t *testing.T) apiservertest.Opener
		failure func(t *testing.T) error
	}{
		{"sqlite", sqliteAt, func(t *testing.T) error { return apiservertest.SQLiteSerializationFailure(t) }},
		{"postgres", postgresAt, func(*testing.T) error { return apiservertest.PostgresSerializationFailure() }},
	} {
		t.Run(db.name, func(t *testing.T) {
			plain := newRetryRun(t, apiservertest.StartOn(t, db.open(t), apiservertest.NoRateLimit))
			retried := newRetryRun(t, apiservertest.StartOn(t, apiservertest.RetryOn(db.open(t), db.failure(t)), apiservertest.NoRateLimit))
			writes := retried.srv.Store.(*apiservertest.RetryStore)
			writes.Retried() // the bootstrap's
			for i, s := range steps {
				want := plain.send(i, s)
				got := retried.send(i, s)
				if want.status != s.status {
					t.Fatalf("step %d %s %s: plain server answered %d %s, want %d", i, s.route, s.body, want.status, want.body, s.status)
				}
				if got != want {
					t.Errorf("step %d %s %s:\nretried: %d %s\n  plain: %d %s", i, s.route, s.body, got.status, got.body, want.status, want.body)
				}
				attempts := writes.Retried()
				if s.status < 300 && !s.reads && len(attempts) == 0 {
					t.Errorf("step %d %s: no write transaction was retried", i, s.route)
				}
				for _, n := range attempts {
					if n != 2 {
						t.Errorf("step %d %s: a write transaction ran %d times, want 2", i, s.route, n)
					}
				}
			}
			// A keyed create's answer is replayed as it was given.
			for _, run := range []*retryRun{plain, retried} {
				first := run.answers[len(fuzzCreates)+1] // the first keyed destination
				again := run.send(len(fuzzCreates)+1, steps[len(fuzzCreates)+1])
				if again.status != first.status || again.body != first.body || !again.replayed {
					t.Errorf("replay of a keyed create: %+v, want %+v replayed", again, first)
				}
			}
		})
	}
}

// retryRun sends the steps to one server, keeping the IDs it created and its answers.
type retryRun struct {
	t       *testing.T
	srv     *apiservertest.Server
	ids     map[string]string // collection path (as fuzzCreates names it) -> last ID created there
	fill    *strings.Replacer // body placeholders that do not change
	seen    map[string]string // generated value -> its name in normalized answers
	answers map[int]retryAnswer
}

type retryAnswer struct {
	status   int
	body     string // normalized
	replayed bool
}

func newRetryRun(t *testing.T, srv *apiservertest.Server) *retryRun {
	ca, leaf, key := fuzzPEMs(t)
	saml := mustJSON(samlMetadata(t))
	return &retryRun{t: t, srv: srv, ids: map[string]string{}, seen: map[string]string{}, answers: map[int]retryAnswer{},
		fill: strings.NewReplacer("{ca}", ca, "{leaf}", leaf, "{key}", key, "{saml}", saml[1:len(saml)-1])}
}

func (r *retryRun) send(i int, s retryStep) retryAnswer {
	r.t.Helper()
	method, template, _ := strings.Cut(s.route, " ")
	refs := strings.NewReplacer("{ipp}", r.ids["/ip_policies"], "{ed}", r.ids["/event_destinations"],
		"{bkd}", r.ids["/backends/static"], "{edge_id}", r.ids["/edges/https"], "{ca_id}", r.ids["/certificate_authorities"],
		"{account_id}", r.srv.AccountID, "{type}", "ip_policy_created.v0")
	collection, _, _ := strings.Cut(template, "/{id}")
	id := r.ids[collection]
	if strings.HasPrefix(collection, "/tunnel_sessions") {
		id = ids.New(ids.TunnelSession)
	}
	path := strings.ReplaceAll(refs.Replace(template), "{id}", id)
	req, err := http.NewRequest(method, r.srv.URL+path, strings.NewReader(r.fill.Replace(refs.Replace(s.body))))
	if err != nil {
		r.t.Fatal(err)
	}
	token := r.srv.APIKey
	if strings.HasPrefix(path, "/_admin/") {
		token = r.srv.AdminToken
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Service-Version", "2")
	req.Header.Set("Content-Type", "application/json")
	if s.key {
		req.Header.Set(api.IdempotencyKeyHeader, fmt.Sprint("retry-", i))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var created struct{ ID string }
	if method == "POST" && resp.StatusCode == http.StatusCreated && json.Unmarshal(data, &created) == nil && created.ID != "" {
		r.ids[template] = created.ID
	}
	a := retryAnswer{status: resp.StatusCode, body: r.normalize(string(data)), replayed: resp.Header.Get(api.IdempotentReplayedHeader) == "true"}
	if _, ok := r.answers[i]; !ok {
		r.answers[i] = a
	}
	return a
}

// generated matches what differs between two servers given the same requests: tokens, IDs,
// operation IDs, the keys and certificates the server makes, CNAME targets and reserved ports.
var generated = regexp.MustCompile(`[0-9A-Za-z]{27}_[0-9A-Za-z]{21}|[a-z]+_[0-9A-Za-z]{27}|"operation_id":"[^"]*"|` +
	`ssh-ed25519 [0-9A-Za-z+/=]+|-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----|[0-9a-z]{16}\.[0-9a-z]{16}\.cname\.|tcp\.warren\.localhost:\d+`)

// times are the server's clock, which two servers read at different moments.
var times = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// normalize names each generated value by the order it was first seen on this server, so
// that two servers' answers compare equal when they say the same.
func (r *retryRun) normalize(body string) string {
	body = strings.ReplaceAll(body, r.srv.URL, "{base}")
	body = times.ReplaceAllString(body, "<time>")
	return generated.ReplaceAllStringFunc(body, func(v string) string {
		if name, ok := r.seen[v]; ok {
			return name
		}
		name := fmt.Sprintf("<%d>", len(r.seen))
		r.seen[v] = name
		return name
	})
}
