package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// routeDocs returns the stored documents of the account's routes by ID, read past the API.
func routeDocs(t *testing.T, c *tc) map[string][]byte {
	t.Helper()
	db, _ := c.srv.Store.(*sqlstore.Store).DB()
	rows, err := db.QueryContext(t.Context(), "SELECT id, doc FROM objects WHERE kind = 'https_edge_route'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	docs := map[string][]byte{}
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			t.Fatal(err)
		}
		docs[id] = doc
	}
	return docs
}

// TestRouteModuleSecretsSealed: OAuth and OIDC client secrets and webhook secrets live in
// the route's sealed secret column (beside the SAML key) and the API returns them; routes
// stored with them in their documents are upgraded when a server starts, once.
func TestRouteModuleSecretsSealed(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, c *tc) {
		const oidcSecret, oauthSecret, hookSecret = "oidc-secret-upgrade-1a", "oauth-secret-upgrade-2b", "whsec-upgrade-3c"
		edge := func() string { return str(c.ok(201, "POST", "/edges/https", map[string]any{})["id"]) }
		e1, e2, e3 := edge(), edge(), edge()
		paths := map[string]string{} // route path -> the secrets its answers must show
		add := func(edge string, body map[string]any, secrets ...string) string {
			body["match_type"], body["match"] = "path_prefix", "/"
			r := c.ok(201, "POST", "/edges/https/"+edge+"/routes", body)
			p := "/edges/https/" + edge + "/routes/" + str(r["id"])
			b, _ := json.Marshal(secrets)
			paths[p] = string(b)
			return p
		}
		oidc := add(e1, map[string]any{"oidc": map[string]any{"issuer": "https://idp.example.com", "client_id": "cid", "client_secret": oidcSecret},
			"webhook_verification": map[string]any{"provider": "slack", "secret": hookSecret}}, oidcSecret, hookSecret)
		add(e2, map[string]any{"oauth": map[string]any{"provider": map[string]any{"github": map[string]any{"client_id": "cid", "client_secret": oauthSecret}}}}, oauthSecret)
		saml := add(e3, map[string]any{"saml": map[string]any{"idp_metadata": samlMetadata(t)}, "webhook_verification": map[string]any{"provider": "slack", "secret": hookSecret}}, hookSecret)
		certificate := c.ok(200, "GET", saml, nil)["saml"].(map[string]any)["request_signing_certificate_pem"]

		answersShowSecrets := func(when string) {
			t.Helper()
			for p, secrets := range paths {
				var want []string
				_ = json.Unmarshal([]byte(secrets), &want)
				b, _ := json.Marshal(c.ok(200, "GET", p, nil))
				for _, s := range want {
					if !bytes.Contains(b, []byte(`"`+s+`"`)) {
						t.Errorf("%s: GET %s lacks %q: %s", when, p, s, b)
					}
				}
			}
			equal(t, when+": the SAML certificate kept", c.ok(200, "GET", saml, nil)["saml"].(map[string]any)["request_signing_certificate_pem"], certificate)
		}
		docsHoldNone := func(when string) {
			t.Helper()
			for id, doc := range routeDocs(t, c) {
				for _, s := range []string{oidcSecret, oauthSecret, hookSecret} {
					if bytes.Contains(doc, []byte(s)) {
						t.Errorf("%s: route %s stores %q in its document", when, id, s)
					}
				}
			}
		}
		answersShowSecrets("created")
		docsHoldNone("created")

		// A PATCH and a module PUT elsewhere keep them; a module DELETE takes its secret along.
		c.ok(200, "PATCH", oidc, map[string]any{"description": "patched"})
		c.ok(200, "PUT", oidc+"/compression", map[string]any{})
		answersShowSecrets("patched")
		c.ok(204, "DELETE", oidc+"/webhook_verification", nil)
		c.ok(200, "PUT", oidc+"/webhook_verification", map[string]any{"provider": "sns"})
		equal(t, "a new module has no old secret", c.ok(200, "GET", oidc+"/webhook_verification", nil)["secret"], "")
		c.ok(200, "PUT", oidc+"/webhook_verification", map[string]any{"provider": "slack", "secret": hookSecret})

		// Old rows: the documents as answers show them (secrets in clear), the secret column
		// with the SAML key only, as servers before the move stored them.
		err := c.srv.Store.Write(t.Context(), func(tx store.Tx) error {
			for p := range paths {
				answer := c.ok(200, "GET", p, nil)
				answer["uri"] = ""
				o, err := tx.Get(t.Context(), "https_edge_route", str(answer["id"]))
				if err != nil {
					return err
				}
				var sec map[string]any
				if len(o.Secret) > 0 {
					_ = json.Unmarshal(o.Secret, &sec)
					delete(sec, "oauth_client_secret")
					delete(sec, "oidc_client_secret")
					delete(sec, "webhook_secret")
					o.Secret, _ = json.Marshal(sec)
				}
				if o.Doc, err = json.Marshal(answer); err != nil {
					return err
				}
				if err := tx.Update(t.Context(), o); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(bytes.Join(mapValues(routeDocs(t, c)), nil), []byte(oauthSecret)) {
			t.Fatal("the old rows were not written")
		}
		answersShowSecrets("old rows")

		// A server starting on the store moves them; a second run finds nothing to do.
		second, err := apiserver.New(context.Background(), apiserver.Options{Store: c.srv.Store, BaseURL: c.srv.URL, BootstrapAPIKey: c.srv.APIKey})
		if err != nil {
			t.Fatal(err)
		}
		_ = second.Close()
		docsHoldNone("upgraded")
		answersShowSecrets("upgraded")
		n, err := c.srv.Store.(store.Upgrader).Upgrade(t.Context(), "https_edge_route", apiserver.UpgradeRouteSecrets)
		equal(t, "a second upgrade", []any{n, err}, []any{0, nil})
	})
}

func mapValues(m map[string][]byte) [][]byte {
	var out [][]byte
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
