package apiserver_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestAPIKeys(t *testing.T) {
	c := newTC(t)
	key := c.ok(201, "POST", "/api_keys", map[string]any{"description": "ci", "metadata": `{"team":"infra"}`})
	// The wire shape: every member, token only in this response.
	equal(t, "members", keysOf(key), []string{"created_at", "description", "id", "metadata", "owner_id", "token", "uri"})
	id := str(key["id"])
	equal(t, "uri", key["uri"], c.srv.URL+"/api_keys/"+id)
	equal(t, "timestamp", timestampRE.MatchString(str(key["created_at"])), true)
	equal(t, "token shape", strings.HasPrefix(str(key["token"]), strings.TrimPrefix(id, "ak_")+"_"), true)
	equal(t, "owner", strings.HasPrefix(str(key["owner_id"]), "usr_"), true)

	got := c.ok(200, "GET", "/api_keys/"+id, nil)
	equal(t, "token after create", got["token"], nil)
	equal(t, "description", got["description"], "ci")

	// PATCH: omitted keeps, "" clears (and an empty member is omitted from the response).
	got = c.ok(200, "PATCH", "/api_keys/"+id, map[string]any{"id": id, "metadata": ""})
	equal(t, "description kept", got["description"], "ci")
	_, hasMetadata := got["metadata"]
	equal(t, "metadata cleared", hasMetadata, false)
	c.ok(200, "PATCH", "/api_keys/"+id, map[string]any{})
	c.fails(400, "ERR_628", "PATCH", "/api_keys/"+id, map[string]any{"owner_id": "usr_x"})
	c.ok(200, "PATCH", "/api_keys/"+id, map[string]any{"owner_id": key["owner_id"]})

	c.fails(400, "ERR_215", "POST", "/api_keys", map[string]any{"description": strings.Repeat("x", 256)})
	c.fails(400, "ERR_100", "POST", "/api_keys", map[string]any{"metadata": strings.Repeat("x", 4097)})
	c.ok(201, "POST", "/api_keys", map[string]any{"description": strings.Repeat("x", 255), "metadata": strings.Repeat("x", 4096)})

	list := c.ok(200, "GET", "/api_keys?filter="+urlEscape(`obj.description == "ci"`), nil)
	equal(t, "filtered", len(list["keys"].([]any)), 1)
	equal(t, "list token", list["keys"].([]any)[0].(map[string]any)["token"], nil)

	c.ok(204, "DELETE", "/api_keys/"+id, nil)
	c.req("GET", "/api_keys/"+id, nil)
	equal(t, "after delete", c.req("GET", "/api_keys/"+id, nil).status, 404)
	equal(t, "delete twice", c.req("DELETE", "/api_keys/"+id, nil).status, 404)
}

func TestOwners(t *testing.T) {
	c := newTC(t)
	memberID, memberToken := c.srv.NewUser(t, api.RoleMember)
	member := c.as(memberToken)
	adminID, _ := c.srv.NewUser(t, api.RoleAdmin)

	// A member owns what it creates and may name only itself.
	key := member.ok(201, "POST", "/api_keys", map[string]any{})
	equal(t, "default owner", key["owner_id"], memberID)
	member.ok(201, "POST", "/credentials", map[string]any{"owner_id": memberID})
	member.fails(403, "ERR_630", "POST", "/api_keys", map[string]any{"owner_id": adminID})
	member.fails(403, "ERR_630", "POST", "/credentials", map[string]any{"owner_id": "usr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"})

	// An admin may name any principal of the account, by ID or (credentials) by email.
	equal(t, "admin names member", c.ok(201, "POST", "/api_keys", map[string]any{"owner_id": memberID})["owner_id"], memberID)
	c.fails(400, "ERR_634", "POST", "/api_keys", map[string]any{"owner_id": "usr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"})
	su := c.ok(201, "POST", "/service_users", map[string]any{"name": "deployer"})
	botKey := c.ok(201, "POST", "/api_keys", map[string]any{"owner_id": su["id"]})
	equal(t, "service user owner", botKey["owner_id"], su["id"])

	// A service user's key acts as the service user, with member rights.
	bot := c.as(str(botKey["token"]))
	equal(t, "bot owns its keys", bot.ok(201, "POST", "/api_keys", map[string]any{})["owner_id"], su["id"])
	bot.fails(403, "ERR_4111", "POST", "/service_users", map[string]any{"name": "x"})

	// An inactive service user's keys stop working and it cannot own new ones.
	c.ok(200, "PATCH", "/service_users/"+str(su["id"]), map[string]any{"active": false})
	bot.fails(403, "ERR_203", "GET", "/api_keys", nil)
	c.fails(400, "ERR_636", "POST", "/api_keys", map[string]any{"owner_id": su["id"]})
}

func TestCredentials(t *testing.T) {
	c := newTC(t)
	cred := c.ok(201, "POST", "/credentials", map[string]any{"description": "agent"})
	equal(t, "members", keysOf(cred), []string{"acl", "created_at", "description", "id", "owner_id", "token", "uri"})
	equal(t, "acl default", cred["acl"], []any{})
	id := str(cred["id"])
	equal(t, "prefix", strings.HasPrefix(id, "cr_"), true)
	equal(t, "token after create", c.ok(200, "GET", "/credentials/"+id, nil)["token"], nil)

	good := []string{"*", "bind:example.com", "bind:*.example.com", "bind:example.com:443", "bind:10.0.0.1:22", "bind:env=prod", "bind:*=*", "bind:team=*"}
	got := c.ok(200, "PATCH", "/credentials/"+id, map[string]any{"acl": good})
	equal(t, "acl", len(got["acl"].([]any)), len(good))
	got = c.ok(200, "PATCH", "/credentials/"+id, map[string]any{"description": "x"})
	equal(t, "acl kept", len(got["acl"].([]any)), len(good))
	got = c.ok(200, "PATCH", "/credentials/"+id, map[string]any{"acl": []string{}})
	equal(t, "acl cleared", got["acl"], []any{})

	for _, rule := range []string{"", "connect:x", "bind:", "bind:exa mple.com", "bind:*.", "bind:host:99999", "bind:=v", "bind:k="} {
		c.fails(400, "ERR_600", "POST", "/credentials", map[string]any{"acl": []string{rule}})
		c.fails(400, "ERR_600", "PATCH", "/credentials/"+id, map[string]any{"acl": []string{rule}})
	}
	c.fails(400, "ERR_627", "PATCH", "/credentials/"+id, map[string]any{"owner_id": "usr_x"})
	c.fails(400, "ERR_606", "PATCH", "/credentials/"+id, map[string]any{})
	c.fails(400, "ERR_606", "PATCH", "/credentials/"+id, map[string]any{"id": id, "description": nil})
	c.fails(400, "ERR_604", "POST", "/credentials", map[string]any{"description": strings.Repeat("x", 256)})
	c.fails(400, "ERR_605", "POST", "/credentials", map[string]any{"metadata": strings.Repeat("x", 4097)})
	c.ok(204, "DELETE", "/credentials/"+id, nil)
}

func newSSHKey(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))) + " me@laptop"
}

func TestSSHCredentials(t *testing.T) {
	c := newTC(t)
	pub := newSSHKey(t)
	cred := c.ok(201, "POST", "/ssh_credentials", map[string]any{"public_key": pub, "acl": []string{"bind:x.example.com"}})
	equal(t, "members", keysOf(cred), []string{"acl", "created_at", "id", "owner_id", "public_key", "uri"})
	equal(t, "echoed verbatim", cred["public_key"], pub)
	id := str(cred["id"])

	c.fails(400, "ERR_611", "POST", "/ssh_credentials", map[string]any{})
	c.fails(400, "ERR_611", "POST", "/ssh_credentials", map[string]any{"public_key": " "})
	c.fails(400, "ERR_612", "POST", "/ssh_credentials", map[string]any{"public_key": "ssh-rsa notakey"})
	c.fails(400, "ERR_609", "POST", "/ssh_credentials", map[string]any{"public_key": pub})
	c.fails(400, "ERR_600", "POST", "/ssh_credentials", map[string]any{"public_key": newSSHKey(t), "acl": []string{"nope"}})
	other := c.as(c.srv.NewAccount(t))
	other.fails(400, "ERR_610", "POST", "/ssh_credentials", map[string]any{"public_key": pub})

	got := c.ok(200, "PATCH", "/ssh_credentials/"+id, map[string]any{"metadata": "m"})
	equal(t, "acl kept", got["acl"], []any{"bind:x.example.com"})
	c.fails(400, "ERR_214", "PATCH", "/ssh_credentials/"+id, map[string]any{"public_key": newSSHKey(t)})
	c.fails(400, "ERR_629", "PATCH", "/ssh_credentials/"+id, map[string]any{"owner_id": "usr_x"})
	c.ok(204, "DELETE", "/ssh_credentials/"+id, nil)
	// The key is free again once its credential is gone.
	c.ok(201, "POST", "/ssh_credentials", map[string]any{"public_key": pub})
}

func TestSSHCertificateAuthorities(t *testing.T) {
	c := newTC(t)
	for _, tt := range []struct {
		body    map[string]any
		keyType string
		sshType string
	}{
		{map[string]any{}, "ed25519", "ssh-ed25519"},
		{map[string]any{"private_key_type": "ed25519"}, "ed25519", "ssh-ed25519"},
		{map[string]any{"private_key_type": "ecdsa"}, "ecdsa", "ecdsa-sha2-nistp256"},
		{map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p384"}, "ecdsa", "ecdsa-sha2-nistp384"},
		{map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p521"}, "ecdsa", "ecdsa-sha2-nistp521"},
		{map[string]any{"private_key_type": "rsa", "key_size": 2048}, "rsa", "ssh-rsa"},
	} {
		ca := c.ok(201, "POST", "/ssh_certificate_authorities", tt.body)
		equal(t, "members", keysOf(ca), []string{"created_at", "id", "key_type", "public_key", "uri"})
		equal(t, "key_type", ca["key_type"], tt.keyType)
		key, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(str(ca["public_key"])))
		if err != nil {
			t.Fatalf("public key %q: %v", ca["public_key"], err)
		}
		equal(t, "ssh type", key.Type(), tt.sshType)
		equal(t, "no comment", comment, "")
		if strings.Contains(c.req("GET", "/ssh_certificate_authorities/"+str(ca["id"]), nil).raw, "PRIVATE") {
			t.Fatal("the private key leaked")
		}
	}
	for _, tt := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{"private_key_type": "dsa"}, "ERR_1936"},
		{map[string]any{"private_key_type": "rsa", "key_size": 1024}, "ERR_1939"},
		{map[string]any{"private_key_type": "ed25519", "key_size": 2048}, "ERR_1940"},
		{map[string]any{"key_size": 4096}, "ERR_1940"},
		{map[string]any{"private_key_type": "ecdsa", "elliptic_curve": "p999"}, "ERR_1941"},
		{map[string]any{"private_key_type": "rsa", "elliptic_curve": "p256"}, "ERR_1942"},
		{map[string]any{"description": strings.Repeat("x", 256)}, "ERR_1937"},
		{map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_1938"},
	} {
		c.fails(400, tt.code, "POST", "/ssh_certificate_authorities", tt.body)
	}
	before := len(c.ok(200, "GET", "/ssh_certificate_authorities", nil)["ssh_certificate_authorities"].([]any))
	equal(t, "rejected requests stored nothing", before, 6)
}

func TestServiceUsers(t *testing.T) {
	c := newTC(t)
	su := c.ok(201, "POST", "/service_users", map[string]any{"name": "ci"})
	equal(t, "members", keysOf(su), []string{"active", "created_at", "id", "name", "uri"})
	equal(t, "active default", su["active"], true)
	id := str(su["id"])

	// One object set behind two paths.
	bot := c.ok(200, "GET", "/bot_users/"+id, nil)
	equal(t, "bot uri", bot["uri"], c.srv.URL+"/bot_users/"+id)
	equal(t, "bot list", len(c.ok(200, "GET", "/bot_users", nil)["bot_users"].([]any)), 1)

	c.fails(400, "ERR_4112", "POST", "/service_users", map[string]any{"name": "ci"})
	c.fails(400, "ERR_4112", "POST", "/bot_users", map[string]any{"name": "ci"})
	c.fails(400, "ERR_4109", "POST", "/service_users", map[string]any{})
	c.fails(400, "ERR_4109", "POST", "/service_users", map[string]any{"name": ""})
	c.fails(400, "ERR_4110", "POST", "/service_users", map[string]any{"name": strings.Repeat("x", 256)})

	got := c.ok(200, "PATCH", "/service_users/"+id, map[string]any{"active": false})
	equal(t, "name kept", got["name"], "ci")
	equal(t, "inactive", got["active"], false)
	c.ok(200, "PATCH", "/bot_users/"+id, map[string]any{"name": "ci-2"})
	list := c.ok(200, "GET", "/service_users?filter="+urlEscape(`obj.id == "`+id+`"`), nil)
	equal(t, "filter by id", len(list["service_users"].([]any)), 1)

	_, memberToken := c.srv.NewUser(t, api.RoleMember)
	member := c.as(memberToken)
	member.fails(403, "ERR_4111", "POST", "/service_users", map[string]any{"name": "m"})
	member.fails(403, "ERR_4111", "PATCH", "/service_users/"+id, map[string]any{"name": "m"})
	member.fails(403, "ERR_4111", "DELETE", "/service_users/"+id, nil)
	member.ok(200, "GET", "/service_users/"+id, nil)

	// Deleting a service user takes its keys with it.
	c.ok(200, "PATCH", "/service_users/"+id, map[string]any{"active": true})
	key := c.ok(201, "POST", "/api_keys", map[string]any{"owner_id": id})
	c.ok(204, "DELETE", "/bot_users/"+id, nil)
	equal(t, "owned key deleted", c.req("GET", "/api_keys/"+str(key["id"]), nil).status, 404)
	c.as(str(key["token"])).fails(403, "ERR_203", "GET", "/api_keys", nil)
}

// TestAccountIsolation proves that no route shows, changes or deletes another account's
// objects: they are plain 404s and never appear in lists.
func TestAccountIsolation(t *testing.T) { onEachDatabase(t, testAccountIsolation) }

func testAccountIsolation(t *testing.T, c *tc) {
	other := c.as(c.srv.NewAccount(t))
	objects := map[string]string{
		"/api_keys":                    str(c.ok(201, "POST", "/api_keys", map[string]any{})["id"]),
		"/credentials":                 str(c.ok(201, "POST", "/credentials", map[string]any{})["id"]),
		"/ssh_credentials":             str(c.ok(201, "POST", "/ssh_credentials", map[string]any{"public_key": newSSHKey(t)})["id"]),
		"/ssh_certificate_authorities": str(c.ok(201, "POST", "/ssh_certificate_authorities", map[string]any{})["id"]),
		"/service_users":               str(c.ok(201, "POST", "/service_users", map[string]any{"name": "x"})["id"]),
		"/bot_users":                   str(c.ok(201, "POST", "/bot_users", map[string]any{"name": "y"})["id"]),
	}
	members := map[string]string{"/api_keys": "keys", "/credentials": "credentials", "/ssh_credentials": "ssh_credentials",
		"/ssh_certificate_authorities": "ssh_certificate_authorities", "/service_users": "service_users", "/bot_users": "bot_users"}
	for path, id := range objects {
		for _, method := range []string{"GET", "PATCH", "DELETE"} {
			var body any
			if method == "PATCH" {
				body = map[string]any{"description": "stolen"}
				if strings.Contains(path, "users") {
					body = map[string]any{"name": "stolen"}
				}
			}
			r := other.req(method, path+"/"+id, body)
			equal(t, method+" "+path+" from another account", r.status, 404)
			equal(t, "no error code", r.body["error_code"], nil)
		}
		for _, item := range other.ok(200, "GET", path, nil)[members[path]].([]any) {
			if item.(map[string]any)["id"] == id {
				t.Fatalf("%s lists another account's %s", path, id)
			}
		}
		c.ok(200, "GET", path+"/"+id, nil) // still there, unchanged
	}
}
