package apiserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/zaplog"
)

// pemLines are the base64 lines of the private-key PEM blocks in s: what a leaked key would
// show of itself in a JSON log line (whose encoding escapes the newlines between them).
// Certificates are public: the API returns them.
func pemLines(s string) []string {
	var out []string
	inKey := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "-----BEGIN"):
			inKey = strings.Contains(l, "PRIVATE KEY")
		case strings.HasPrefix(l, "-----END"):
			inKey = false
		case inKey && len(l) >= 32:
			out = append(out, l)
		}
	}
	return out
}

// TestSecretsStayOutOfLogsAndDatabase drives a full run through a server whose real logger
// (the commands' JSON logger) writes at debug level: every family that takes or makes a
// secret, tokens of every kind, an idempotent create replayed, and bad Authorization headers.
// Then no secret appears anywhere in the log output; every secret column holds a sealed
// value, the secret-bearing kinds among them; and no private key or secret the API does not
// return appears in any stored document, secret or event.
func TestSecretsStayOutOfLogsAndDatabase(t *testing.T) {
	out := &apiservertest.LockedBuffer{}
	core, logs := observer.New(zapcore.DebugLevel)
	real := zaplog.New(zap.NewAtomicLevelAt(zap.DebugLevel), out)
	c := newTC(t, apiservertest.NoRateLimit, func(o *apiserver.Options) { o.Logger = zap.New(zapcore.NewTee(real.Core(), core)) })

	// Kept returns only their hashes or keeps them server-side: neither in logs nor at rest in clear.
	kept := []string{c.token, c.srv.AdminToken, c.srv.SecretKey}
	// Returned by the API in clear (details.md §8.6, §8.8), sealed at rest, never logged.
	returned := []string{"oidc-client-secret-5e1f", "oauth-client-secret-77a0", "whsec-route-secret-c3d2"}

	kept = append(kept, c.srv.NewAccount(t))
	_, member := c.srv.NewUser(t, "member")
	kept = append(kept, member)
	kept = append(kept, str(c.ok(201, "POST", "/api_keys", map[string]any{"description": "k"})["token"]))
	kept = append(kept, str(c.ok(201, "POST", "/credentials", map[string]any{})["token"]))
	idem := c.req("POST", "/api_keys", map[string]any{"description": "idem"}, idemHeader, "idem-key-1")
	replay := c.req("POST", "/api_keys", map[string]any{"description": "idem"}, idemHeader, "idem-key-1")
	equal(t, "idempotent create and replay", []any{idem.status, replay.status, replay.body["token"]}, []any{201, 201, idem.body["token"]})
	kept = append(kept, str(idem.body["token"]))

	p := newPKI(t)
	c.ok(201, "POST", "/tls_certificates", map[string]any{"certificate_pem": p.leaf.pem + p.intermediate.pem, "private_key_pem": p.leaf.keyPEM})
	kept = append(kept, pemLines(p.leaf.keyPEM)...)
	c.ok(201, "POST", "/ssh_certificate_authorities", map[string]any{"private_key_type": "ecdsa"})
	csr, _ := newCSR(t, "operator")
	c.ok(201, "POST", "/orchestrator_operators", map[string]any{"enabled_features": []string{"bindings"}, "binding": map[string]any{"csr": csr}})

	// Each module's secret is in the create's answer, the route's GET, the module's GET and the
	// edge's routes.
	route := func(module string, body map[string]any, secret string) {
		edge := str(c.ok(201, "POST", "/edges/https", map[string]any{"description": module})["id"])
		created := c.ok(201, "POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/", module: body})
		path := "/edges/https/" + edge + "/routes/" + str(created["id"])
		for name, answer := range map[string]any{"create": created, "GET": c.ok(200, "GET", path, nil),
			"module GET": map[string]any{module: c.ok(200, "GET", path+"/"+module, nil)},
			"edge GET":   c.ok(200, "GET", "/edges/https/"+edge, nil)["routes"].([]any)[0]} {
			if b, _ := json.Marshal(answer); secret != "" && !bytes.Contains(b, []byte(`"`+secret+`"`)) {
				t.Errorf("%s %s: the answer lacks the secret: %s", module, name, b)
			}
		}
	}
	route("oidc", map[string]any{"issuer": "https://idp.example.com", "client_id": "cid", "client_secret": returned[0]}, returned[0])
	route("oauth", map[string]any{"provider": map[string]any{"google": map[string]any{"client_id": "cid", "client_secret": returned[1]}}}, returned[1])
	route("webhook_verification", map[string]any{"provider": "TWILIO", "secret": returned[2]}, returned[2])
	route("saml", map[string]any{"idp_metadata": samlMetadata(t)}, "")
	kept = append(kept, returned...)

	const awsKey, obsKey, cloudKey = "aws-secret-kept-1b2c", "observability-key-kept-9f8e", "cloud-client-secret-kept-4d5e"
	kept = append(kept, awsKey, obsKey, cloudKey)
	c.ok(201, "POST", "/event_destinations", map[string]any{"format": "json", "target": dataStream(creds(awsKey))})
	c.ok(201, "POST", "/event_destinations", map[string]any{"format": "json", "target": map[string]any{"observability": map[string]any{"api_key": obsKey, "site": "datadoghq.com"}}})
	c.ok(201, "POST", "/event_destinations", map[string]any{"format": "json", "target": cloudLogs(cloudKey)})

	// Bad credentials: refused, and not echoed into the log either.
	unknown := ids.NewToken(ids.New(ids.APIKey))
	malformed := "not-a-token-5a6b7c8d9e"
	basic := base64.StdEncoding.EncodeToString([]byte("user:basic-password-3f4e"))
	kept = append(kept, unknown, malformed, basic, "basic-password-3f4e", "wrong-admin-token-2c3d")
	for _, h := range []string{"Bearer " + unknown, "Bearer " + malformed, "Basic " + basic, malformed} {
		equal(t, "status with "+h[:5], c.req("GET", "/api_keys", nil, "Authorization", h).status, 403)
	}
	r := c.req("POST", "/_admin/accounts", map[string]any{"name": "x"}, "Authorization", "Bearer wrong-admin-token-2c3d")
	equal(t, "wrong admin token", r.status >= 400 && r.status < 500, true)

	// The keys the server made itself: read through the store, which opens them.
	made := map[string]bool{}    // kinds holding a secret
	withKey := map[string]bool{} // kinds holding a private key
	db, _ := c.srv.Store.(*sqlstore.Store).DB()
	type row struct {
		kind, id    string
		doc, secret []byte
	}
	var rows []row
	res, err := db.QueryContext(t.Context(), "SELECT kind, id, doc, secret FROM objects")
	if err != nil {
		t.Fatal(err)
	}
	for res.Next() {
		var r row
		if err := res.Scan(&r.kind, &r.id, &r.doc, &r.secret); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	res.Close()
	for _, r := range rows {
		if len(r.secret) == 0 {
			continue
		}
		made[r.kind] = true
		if !sealing.Sealed(r.secret) {
			t.Errorf("%s %s: the secret column holds plaintext %q", r.kind, r.id, r.secret)
		}
		err := c.srv.Store.Read(t.Context(), func(tx store.Tx) error {
			o, err := tx.Get(t.Context(), r.kind, r.id)
			if err == nil {
				var fields map[string]any
				if json.Unmarshal(o.Secret, &fields) == nil {
					for _, v := range fields {
						lines := pemLines(str(v))
						kept = append(kept, lines...)
						withKey[r.kind] = withKey[r.kind] || len(lines) > 0
					}
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{"api_key", "credential", "tls_certificate", "ssh_certificate_authority", "operator_ca", "https_edge_route", "event_destination", "idempotency_key"} {
		if !made[kind] {
			t.Errorf("no %s holds a secret; the kinds that do: %v", kind, slices.Sorted(maps.Keys(made)))
		}
	}
	for _, kind := range []string{"tls_certificate", "ssh_certificate_authority", "operator_ca", "https_edge_route"} {
		if !withKey[kind] {
			t.Errorf("no %s holds a private key; the kinds that do: %v", kind, slices.Sorted(maps.Keys(withKey)))
		}
	}
	var events [][]byte
	if ev, err := db.QueryContext(t.Context(), "SELECT payload FROM events"); err == nil {
		for ev.Next() {
			var p []byte
			_ = ev.Scan(&p)
			events = append(events, p)
		}
		ev.Close()
	}
	for _, r := range rows {
		for _, b := range [][]byte{r.doc, r.secret} {
			if bytes.Contains(b, []byte("PRIVATE KEY")) {
				t.Errorf("%s %s stores a private key in clear", r.kind, r.id)
			}
			for _, s := range kept {
				if bytes.Contains(b, []byte(s)) {
					t.Errorf("%s %s stores %q in clear", r.kind, r.id, s)
				}
			}
		}
	}
	for _, p := range events {
		for _, s := range append(kept, "PRIVATE KEY") {
			if bytes.Contains(p, []byte(s)) {
				t.Errorf("an event payload carries %q", s)
			}
		}
	}

	// The log: a last request's access line says every earlier one is written too.
	c.ok(200, "GET", "/api_keys?limit=7", nil)
	apiservertest.WaitUntil(t, "the last access line", func() bool {
		return strings.Contains(out.String(), `"msg":"request"`) && len(logs.FilterMessage("request").FilterField(zap.String("path", "/api_keys")).AllUntimed()) > 0 &&
			strings.Count(out.String(), `"msg":"request"`) == len(accessLines(logs))
	})
	text := out.String()
	if !strings.Contains(text, `"level":"debug"`) || strings.Count(text, `"msg":"request"`) < 20 {
		t.Fatalf("the log is not a debug log of the whole run:\n%s", text)
	}
	for _, s := range append(kept, returned...) {
		if strings.Contains(text, s) {
			t.Errorf("the log carries the secret %q", s)
		}
	}
	if strings.Contains(text, "PRIVATE KEY") {
		t.Error("the log carries a private key")
	}
	noSecrets(t, logs, append(kept, returned...)...)
}
