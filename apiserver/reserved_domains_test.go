package apiserver_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

var reservedDomainMembers = []string{
	"acme_challenge_cname_target", "certificate", "certificate_management_policy", "certificate_management_status",
	"cname_target", "created_at", "description", "domain", "id", "metadata", "region", "resolves_to", "uri",
}

var (
	cnameTarget = regexp.MustCompile(`^[a-z2-7]{16}\.[a-z2-7]{16}\.cname\.warren\.localhost$`)
	acmeTarget  = regexp.MustCompile(`^[a-z2-7]{8}\.acme-challenge\.warren\.localhost$`)
)

// testClock is a settable Options.Now, safe to change between requests.
type testClock struct{ unix atomic.Int64 }

func (k *testClock) now() time.Time                 { return time.Unix(k.unix.Load(), 0).UTC() }
func (k *testClock) set(t time.Time)                { k.unix.Store(t.Unix()) }
func (k *testClock) configure(o *apiserver.Options) { o.Now = k.now }

// count returns the number of items of a list.
func (c *tc) count(path, member string) int {
	c.t.Helper()
	return len(c.ok(200, "GET", path, nil)[member].([]any))
}

// uploadCert uploads a self-signed certificate and returns its ID.
func (c *tc) uploadCert(t *testing.T, name string) string {
	t.Helper()
	cert := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, DNSNames: []string{name}}, ecKey(t), "PRIVATE KEY", nil)
	return str(c.ok(201, "POST", "/tls_certificates", map[string]any{"certificate_pem": cert.pem, "private_key_pem": cert.keyPEM})["id"])
}

func provisioning(startedAt string) map[string]any {
	return map[string]any{"renews_at": nil, "provisioning_job": map[string]any{
		"error_code": nil, "msg": "Managed certificate provisioning in progress.", "started_at": startedAt, "retries_at": nil,
	}}
}

var defaultPolicy = map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}

func TestReservedDomainCreate(t *testing.T) {
	var clock testClock
	clock.set(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := newTC(t, clock.configure)

	// A domain the caller brings: normalised, a CNAME target, the default managed policy.
	r := c.req("POST", "/reserved_domains", map[string]any{"domain": " Example.COM. ", "region": "us", "description": "d", "metadata": "m"})
	equal(t, "status", r.status, 201)
	d := r.body
	id := str(d["id"])
	if !ids.Valid(id, "rd_") {
		t.Fatalf("id %q", id)
	}
	equal(t, "members", keysOf(d), reservedDomainMembers)
	if !cnameTarget.MatchString(str(d["cname_target"])) {
		t.Fatalf("cname_target %q", d["cname_target"])
	}
	for _, member := range []string{`"certificate":null`, `"acme_challenge_cname_target":null`, `"resolves_to":null`, `"region":""`} {
		if !strings.Contains(r.raw, member) {
			t.Fatalf("%s missing from %s", member, r.raw)
		}
	}
	equal(t, "uri", d["uri"], c.srv.URL+"/reserved_domains/"+id)
	equal(t, "created_at", d["created_at"], "2026-03-04T05:06:07Z")
	delete(d, "id")
	delete(d, "uri")
	delete(d, "created_at")
	delete(d, "cname_target")
	equal(t, "reserved domain", d, map[string]any{
		"description":                   "d",
		"metadata":                      "m",
		"domain":                        "example.com",
		"region":                        "",
		"certificate":                   nil,
		"certificate_management_policy": defaultPolicy,
		"certificate_management_status": provisioning("2026-03-04T05:06:07Z"),
		"acme_challenge_cname_target":   nil,
		"resolves_to":                   nil,
	})
	got := c.ok(200, "GET", "/reserved_domains/"+id, nil)
	equal(t, "GET domain", got["domain"], "example.com")
	equal(t, "GET policy", got["certificate_management_policy"], defaultPolicy)

	// A wildcard the caller brings also gets an ACME challenge target.
	w := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "*.Example.org"})
	equal(t, "wildcard", w["domain"], "*.example.org")
	if !cnameTarget.MatchString(str(w["cname_target"])) || !acmeTarget.MatchString(str(w["acme_challenge_cname_target"])) {
		t.Fatalf("targets %q %q", w["cname_target"], w["acme_challenge_cname_target"])
	}
	if w["cname_target"] == got["cname_target"] {
		t.Fatal("two domains share a cname_target")
	}
	equal(t, "wildcard policy", w["certificate_management_policy"], defaultPolicy)

	// Service-owned names: no targets, no policy, no status.
	for _, name := range []string{"app.warren.localhost", "*.app.warren.localhost", "a.b.warren.localhost"} {
		s := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": name})
		equal(t, name+" members", keysOf(s), without(reservedDomainMembers, "description", "metadata"))
		for _, member := range []string{"cname_target", "acme_challenge_cname_target", "certificate", "certificate_management_policy", "certificate_management_status", "resolves_to"} {
			equal(t, name+" "+member, s[member], nil)
		}
	}

	// A policy given on create: private_key_type defaults to ecdsa, authority to letsencrypt.
	p := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "p1.example.net", "certificate_management_policy": map[string]any{"authority": "letsencrypt"}, "certificate_id": ""})
	equal(t, "policy without key type", p["certificate_management_policy"], defaultPolicy)
	p = c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "p2.example.net", "certificate_management_policy": map[string]any{"private_key_type": "rsa"}})
	equal(t, "rsa policy", p["certificate_management_policy"], map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"})
	equal(t, "rsa status", p["certificate_management_status"], provisioning("2026-03-04T05:06:07Z"))

	// resolves_to on create, and [] kept as [].
	p = c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "p3.example.net", "resolves_to": []any{map[string]any{"value": "eu"}, map[string]any{"value": "us-cal-1"}}})
	equal(t, "resolves_to", p["resolves_to"], []any{map[string]any{"value": "eu"}, map[string]any{"value": "us-cal-1"}})
	r = c.req("POST", "/reserved_domains", map[string]any{"domain": "p4.example.net", "resolves_to": []any{}})
	equal(t, "status", r.status, 201)
	if !strings.Contains(r.raw, `"resolves_to":[]`) {
		t.Fatalf("resolves_to [] not kept: %s", r.raw)
	}
	// Once deleted, the name can be reserved again.
	c.ok(204, "DELETE", "/reserved_domains/"+str(r.body["id"]), nil)
	c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "P4.example.net"})
}

func TestReservedDomainRejections(t *testing.T) {
	c := newTC(t)
	other := c.as(c.srv.NewAccount(t))
	taken := str(c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "taken.example.com"})["id"])
	other.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "theirs.example.com"})
	theirCert := other.uploadCert(t, "theirs.example.com")
	cert := c.uploadCert(t, "x.example.com")
	stored := c.count("/reserved_domains", "reserved_domains")
	policy := map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}

	for _, tt := range []struct {
		code string
		body map[string]any
	}{
		{"ERR_448", map[string]any{}},
		{"ERR_448", map[string]any{"domain": ""}},
		{"ERR_448", map[string]any{"domain": "  .  "}},
		{"ERR_448", map[string]any{"domain": "localhost"}},
		{"ERR_514", map[string]any{"domain": strings.Repeat("abcdefghi.", 25) + "coms"}},
		{"ERR_513", map[string]any{"domain": strings.Repeat("a", 64) + ".com"}},
		{"ERR_438", map[string]any{"domain": "my_app.example.com"}},
		{"ERR_406", map[string]any{"domain": "my app.example.com"}},
		{"ERR_406", map[string]any{"domain": "example.com:443"}},
		{"ERR_409", map[string]any{"domain": "a..example.com"}},
		{"ERR_407", map[string]any{"domain": "-a.example.com"}},
		{"ERR_408", map[string]any{"domain": "a-.example.com"}},
		{"ERR_410", map[string]any{"domain": "ab--cd.example.com"}},
		{"ERR_429", map[string]any{"domain": "xn--99999999999.example.com"}},
		{"ERR_402", map[string]any{"domain": "a.*.example.com"}},
		{"ERR_403", map[string]any{"domain": "*a.example.com"}},
		{"ERR_416", map[string]any{"domain": "*.com"}},
		{"ERR_416", map[string]any{"domain": "*.co.uk"}},
		{"ERR_404", map[string]any{"domain": "Warren.Localhost."}},
		{"ERR_404", map[string]any{"domain": "*.warren.localhost"}},
		{"ERR_423", map[string]any{"domain": strings.Repeat("abcdefgh.", 8) + "warren.localhost"}},
		{"ERR_450", map[string]any{"domain": "cname.warren.localhost"}},
		{"ERR_450", map[string]any{"domain": "x.y.cname.warren.localhost"}},
		{"ERR_450", map[string]any{"domain": "abc.acme-challenge.warren.localhost"}},
		{"ERR_450", map[string]any{"domain": "tcp.warren.localhost"}},
		{"ERR_400", map[string]any{"domain": "r.example.com", "region": "mars"}},
		{"ERR_400", map[string]any{"domain": "r.example.com", "region": "US"}},
		{"ERR_420", map[string]any{"domain": "r.example.com", "description": strings.Repeat("d", 256)}},
		{"ERR_421", map[string]any{"domain": "r.example.com", "metadata": strings.Repeat("m", 4097)}},
		{"ERR_413", map[string]any{"domain": "taken.example.com"}},
		{"ERR_413", map[string]any{"domain": "TAKEN.example.com."}},
		{"ERR_414", map[string]any{"domain": "theirs.example.com"}},
		{"ERR_434", map[string]any{"domain": "r.example.com", "certificate_id": cert, "certificate_management_policy": policy}},
		{"ERR_435", map[string]any{"domain": "r.example.com", "certificate_management_policy": map[string]any{"authority": "zerossl"}}},
		{"ERR_1909", map[string]any{"domain": "r.example.com", "certificate_management_policy": map[string]any{"private_key_type": "ed25519"}}},
		{"ERR_439", map[string]any{"domain": "r.warren.localhost", "certificate_management_policy": policy}},
		{"ERR_440", map[string]any{"domain": "r.warren.localhost", "certificate_id": cert}},
		{"ERR_1965", map[string]any{"domain": "r.example.com", "certificate_id": "cert_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"}},
		{"ERR_1965", map[string]any{"domain": "r.example.com", "certificate_id": theirCert}},
		{"ERR_1965", map[string]any{"domain": "r.example.com", "certificate_id": taken}},
		{"ERR_1965", map[string]any{"domain": "r.example.com", "certificate_id": "nonsense"}},
		{"ERR_456", map[string]any{"domain": "r.example.com", "resolves_to": []any{map[string]any{"value": "us"}, map[string]any{"value": "us"}}}},
		{"ERR_215", map[string]any{"domain": "r.example.com", "resolves_to": []any{map[string]any{"value": "mars"}}}},
		{"ERR_215", map[string]any{"domain": "r.example.com", "resolves_to": "us"}},
		{"ERR_214", map[string]any{"domain": "r.example.com", "cname_target": "x"}},
	} {
		t.Run(tt.code, func(t *testing.T) {
			c := c.as(c.token)
			c.t = t
			e := c.fails(400, tt.code, "POST", "/reserved_domains", tt.body)
			if tt.code == "ERR_413" && !strings.Contains(str(e["msg"]), taken) {
				t.Fatalf("ERR_413 does not name the holder: %v", e["msg"])
			}
			if tt.code == "ERR_414" && strings.Contains(e["msg"].(string), "rd_") {
				t.Fatalf("ERR_414 names another account's domain: %v", e["msg"])
			}
		})
	}
	equal(t, "nothing stored", c.count("/reserved_domains", "reserved_domains"), stored)
	equal(t, "the other account's domains", other.count("/reserved_domains", "reserved_domains"), 1)
}

func TestReservedDomainUpdate(t *testing.T) {
	var clock testClock
	clock.set(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := newTC(t, clock.configure)
	d := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com", "description": "d", "metadata": "m"})
	path := "/reserved_domains/" + str(d["id"])
	owned := "/reserved_domains/" + str(c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "mine.warren.localhost"})["id"])
	cert := c.uploadCert(t, "app.example.com")

	// Empty updates and immutable members.
	for _, body := range []any{nil, map[string]any{}, map[string]any{"id": str(d["id"])}, map[string]any{"resolves_to": nil, "certificate_management_policy": nil}} {
		c.fails(400, "ERR_422", "PATCH", path, body)
	}
	for _, member := range []string{"domain", "region", "cname_target"} {
		c.fails(400, "ERR_214", "PATCH", path, map[string]any{member: "us"})
	}
	c.fails(400, "ERR_420", "PATCH", path, map[string]any{"description": strings.Repeat("d", 256)})
	c.fails(400, "ERR_421", "PATCH", path, map[string]any{"metadata": strings.Repeat("m", 4097)})
	c.fails(400, "ERR_434", "PATCH", path, map[string]any{"certificate_id": cert, "certificate_management_policy": defaultPolicy})
	c.fails(400, "ERR_435", "PATCH", path, map[string]any{"certificate_management_policy": map[string]any{"authority": "x"}})
	c.fails(400, "ERR_1909", "PATCH", path, map[string]any{"certificate_management_policy": map[string]any{"private_key_type": "dsa"}})
	c.fails(400, "ERR_1965", "PATCH", path, map[string]any{"certificate_id": "cert_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"})
	c.fails(400, "ERR_456", "PATCH", path, map[string]any{"resolves_to": []any{map[string]any{"value": "eu"}, map[string]any{"value": "eu"}}})
	c.fails(400, "ERR_215", "PATCH", path, map[string]any{"resolves_to": []any{map[string]any{"value": "everywhere"}}})
	c.fails(400, "ERR_439", "PATCH", owned, map[string]any{"certificate_management_policy": defaultPolicy})
	c.fails(400, "ERR_440", "PATCH", owned, map[string]any{"certificate_id": cert})
	// A rejected PATCH changes nothing, not even the members given before the bad one.
	c.fails(400, "ERR_456", "PATCH", path, map[string]any{"description": "new", "resolves_to": []any{map[string]any{"value": "eu"}, map[string]any{"value": "eu"}}})
	equal(t, "unchanged after rejections", c.ok(200, "GET", path, nil), d)

	// D/M: omitted keeps, "" clears.
	got := c.ok(200, "PATCH", path, map[string]any{"metadata": "m2"})
	equal(t, "description kept", got["description"], "d")
	equal(t, "metadata set", got["metadata"], "m2")
	got = c.ok(200, "PATCH", path, map[string]any{"description": "", "id": str(d["id"])})
	equal(t, "description cleared", keysOf(got), without(reservedDomainMembers, "description"))
	equal(t, "domain kept", got["domain"], "app.example.com")
	equal(t, "cname_target kept", got["cname_target"], d["cname_target"])
	equal(t, "policy kept", got["certificate_management_policy"], defaultPolicy)
	equal(t, "status kept", got["certificate_management_status"], d["certificate_management_status"])

	// resolves_to: set, kept when omitted, [] un-pins.
	got = c.ok(200, "PATCH", path, map[string]any{"resolves_to": []any{map[string]any{"value": "global"}}})
	equal(t, "resolves_to", got["resolves_to"], []any{map[string]any{"value": "global"}})
	got = c.ok(200, "PATCH", path, map[string]any{"metadata": "m3"})
	equal(t, "resolves_to kept", got["resolves_to"], []any{map[string]any{"value": "global"}})
	r := c.req("PATCH", path, map[string]any{"resolves_to": []any{}})
	equal(t, "status", r.status, 200)
	if !strings.Contains(r.raw, `"resolves_to":[]`) || !strings.Contains(c.req("GET", path, nil).raw, `"resolves_to":[]`) {
		t.Fatalf("resolves_to [] not kept: %s", r.raw)
	}

	// The policy: the same policy again keeps its provisioning job; a new one restarts it.
	// certificate_id "" beside a policy is no certificate (real clients send exactly that).
	clock.set(time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC))
	got = c.ok(200, "PATCH", path, map[string]any{"certificate_id": "", "certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}})
	equal(t, "same policy, same job", got["certificate_management_status"], provisioning("2026-03-04T05:06:07Z"))
	got = c.ok(200, "PATCH", path, map[string]any{"certificate_id": "", "certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"}})
	equal(t, "rsa", got["certificate_management_policy"], map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"})
	equal(t, "new job", got["certificate_management_status"], provisioning("2026-03-05T00:00:00Z"))
	got = c.ok(200, "PATCH", path, map[string]any{"certificate_id": ""})
	equal(t, "certificate_id \"\" alone changes nothing", got["certificate_management_policy"], map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"})

	// Service-owned domains accept D/M and resolves_to.
	got = c.ok(200, "PATCH", owned, map[string]any{"description": "x", "resolves_to": []any{map[string]any{"value": "eu"}}, "certificate_id": ""})
	equal(t, "owned", got["certificate_management_policy"], nil)
}

func TestReservedDomainCertificateCycle(t *testing.T) {
	var clock testClock
	clock.set(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := newTC(t, clock.configure)
	d := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com"})
	id := str(d["id"])
	path := "/reserved_domains/" + id
	cert := c.uploadCert(t, "app.example.com")
	certRef := map[string]any{"id": cert, "uri": c.srv.URL + "/tls_certificates/" + cert}

	// Attach: the certificate replaces the policy and its status.
	got := c.ok(200, "PATCH", path, map[string]any{"certificate_id": cert})
	equal(t, "certificate", got["certificate"], certRef)
	equal(t, "policy cleared", got["certificate_management_policy"], nil)
	equal(t, "status cleared", got["certificate_management_status"], nil)
	equal(t, "GET certificate", c.ok(200, "GET", path, nil)["certificate"], certRef)
	list := c.ok(200, "GET", "/reserved_domains?filter="+urlEscape(`obj.certificate.id == "`+cert+`"`), nil)["reserved_domains"].([]any)
	equal(t, "filter on certificate.id", len(list), 1)
	equal(t, "listed certificate", list[0].(map[string]any)["certificate"], certRef)

	// An attached certificate cannot be deleted.
	e := c.fails(400, "ERR_1966", "DELETE", "/tls_certificates/"+cert, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], id)

	// Deleting the (absent) policy leaves the certificate alone.
	c.ok(204, "DELETE", path+"/certificate_management_policy", nil)
	equal(t, "certificate kept", c.ok(200, "GET", path, nil)["certificate"], certRef)

	// A policy replaces the uploaded certificate, which is then free to go.
	got = c.ok(200, "PATCH", path, map[string]any{"certificate_management_policy": map[string]any{"authority": "letsencrypt"}, "certificate_id": ""})
	equal(t, "certificate replaced", got["certificate"], nil)
	equal(t, "policy", got["certificate_management_policy"], defaultPolicy)
	equal(t, "status", got["certificate_management_status"], provisioning("2026-03-04T05:06:07Z"))
	// While a policy is set the certificate cannot be detached.
	c.fails(400, "ERR_436", "DELETE", path+"/certificate", nil)

	// Attach again, then detach: certificate, policy and status are all null.
	c.ok(200, "PATCH", path, map[string]any{"certificate_id": cert})
	r := c.req("DELETE", path+"/certificate", nil)
	equal(t, "detach", r.status, 204)
	equal(t, "no body", r.raw, "")
	got = c.ok(200, "GET", path, nil)
	for _, member := range []string{"certificate", "certificate_management_policy", "certificate_management_status"} {
		equal(t, member+" after detach", got[member], nil)
	}
	c.ok(204, "DELETE", path+"/certificate", nil) // nothing left to detach

	// Turning management off: policy and status become null.
	c.ok(200, "PATCH", path, map[string]any{"certificate_management_policy": defaultPolicy})
	r = c.req("DELETE", path+"/certificate_management_policy", nil)
	equal(t, "policy delete", r.status, 204)
	equal(t, "no body", r.raw, "")
	got = c.ok(200, "GET", path, nil)
	equal(t, "policy deleted", got["certificate_management_policy"], nil)
	equal(t, "status deleted", got["certificate_management_status"], nil)
	equal(t, "other members kept", got["cname_target"], d["cname_target"])

	// Created with a certificate: no default policy. Deleting the domain frees the certificate.
	d2 := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "*.app.example.com", "certificate_id": cert})
	equal(t, "created with certificate", d2["certificate"], certRef)
	equal(t, "no default policy", d2["certificate_management_policy"], nil)
	equal(t, "no status", d2["certificate_management_status"], nil)
	c.fails(400, "ERR_1966", "DELETE", "/tls_certificates/"+cert, nil)
	c.ok(204, "DELETE", "/reserved_domains/"+str(d2["id"]), nil)
	c.ok(204, "DELETE", "/tls_certificates/"+cert, nil)

	// The sub-deletes on unknown, malformed and foreign IDs; and without a body.
	other := c.as(c.srv.NewAccount(t))
	for _, sub := range []string{"/certificate", "/certificate_management_policy"} {
		r := c.req("DELETE", "/reserved_domains/rd_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"+sub, nil)
		equal(t, "unknown "+sub, r.status, 404)
		equal(t, "no error code", r.body["error_code"], nil)
		c.fails(400, "ERR_227", "DELETE", "/reserved_domains/cert_x"+sub, nil)
		c.fails(400, "ERR_211", "DELETE", path+sub, `{}`)
		equal(t, "foreign "+sub, other.req("DELETE", path+sub, nil).status, 404)
		equal(t, "GET "+sub, c.req("GET", path+sub, nil).status, 404)
	}
}

func TestReservedDomainDeleteAndFilters(t *testing.T) {
	c := newTC(t)
	a := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "a.example.com", "description": "first", "metadata": `{"env":"prod"}`})
	b := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "*.b.example.com"})
	s := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "s.warren.localhost"})
	for filter, want := range map[string][]any{
		`obj.domain == "a.example.com"`:                        {a["id"]},
		`obj.domain.endsWith(".example.com")`:                  {b["id"], a["id"]},
		`obj.region == ""`:                                     {s["id"], b["id"], a["id"]},
		`obj.cname_target == null`:                             {s["id"]},
		`obj.cname_target != null`:                             {b["id"], a["id"]},
		`obj.cname_target == "` + str(a["cname_target"]) + `"`: {a["id"]},
		`obj.acme_challenge_cname_target != null`:              {b["id"]},
		`obj.certificate.id == ""`:                             {s["id"], b["id"], a["id"]},
		`obj.description == "first" && obj.metadata != ""`:     {a["id"]},
		`obj.id == "` + str(b["id"]) + `"`:                     {b["id"]},
		`obj.created_at > timestamp("2020-01-01T00:00:00Z")`:   {s["id"], b["id"], a["id"]},
	} {
		var got []any
		for _, item := range c.ok(200, "GET", "/reserved_domains?filter="+urlEscape(filter), nil)["reserved_domains"].([]any) {
			got = append(got, item.(map[string]any)["id"])
		}
		equal(t, filter, got, want)
	}
	c.fails(400, "ERR_250", "GET", "/reserved_domains?filter="+urlEscape(`obj.resolves_to == null`), nil)
	c.fails(400, "ERR_250", "GET", "/reserved_domains?filter="+urlEscape(`obj.certificate.id.startsWith("cert_")`), nil)

	// Paging keeps newest first.
	page := c.ok(200, "GET", "/reserved_domains?limit=2", nil)
	equal(t, "page", len(page["reserved_domains"].([]any)), 2)
	equal(t, "next", page["next_page_uri"], c.srv.URL+"/reserved_domains?before_id="+str(b["id"])+"&limit=2")

	// A domain something still refers to (an edge, later) cannot be deleted: ERR_446.
	path := "/reserved_domains/" + str(a["id"])
	edge := ids.New("edghts_")
	write := func(fn func(ctx context.Context, tx store.Tx) error) {
		t.Helper()
		if err := c.srv.Store.Write(context.Background(), func(tx store.Tx) error { return fn(context.Background(), tx) }); err != nil {
			t.Fatal(err)
		}
	}
	write(func(ctx context.Context, tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: "https_edge", ID: edge, AccountID: c.srv.AccountID, Doc: []byte(`{}`), Refs: []string{str(a["id"])}})
	})
	e := c.fails(400, "ERR_446", "DELETE", path, nil)
	equal(t, "referrers", e["details"].(map[string]any)["referrers"], edge)
	if !strings.Contains(str(e["msg"]), "a.example.com") {
		t.Fatalf("ERR_446 does not name the domain: %v", e["msg"])
	}
	write(func(ctx context.Context, tx store.Tx) error { return tx.Delete(ctx, "https_edge", edge) })

	r := c.req("DELETE", path, nil)
	equal(t, "delete", r.status, 204)
	equal(t, "no body", r.raw, "")
	equal(t, "gone", c.req("GET", path, nil).status, 404)
	equal(t, "deleted twice", c.req("DELETE", path, nil).status, 404)
	c.fails(400, "ERR_227", "GET", "/reserved_domains/ra_x", nil)
}

func TestReservedDomainIsolation(t *testing.T) { onEachDatabase(t, testReservedDomainIsolation) }

func testReservedDomainIsolation(t *testing.T, c *tc) {
	other := c.as(c.srv.NewAccount(t))
	d := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.example.com", "description": "mine"})
	path := "/reserved_domains/" + str(d["id"])
	for _, method := range []string{"GET", "PATCH", "DELETE"} {
		var body any
		if method == "PATCH" {
			body = map[string]any{"description": "stolen"}
		}
		r := other.req(method, path, body)
		equal(t, method+" from another account", r.status, 404)
		equal(t, "no error code", r.body["error_code"], nil)
	}
	equal(t, "listed to another account", other.count("/reserved_domains", "reserved_domains"), 0)
	equal(t, "unchanged", c.ok(200, "GET", path, nil), d)
	// The other account cannot attach our certificate either.
	cert := c.uploadCert(t, "app.example.com")
	theirs := other.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "their.example.com"})
	other.fails(400, "ERR_1965", "PATCH", "/reserved_domains/"+str(theirs["id"]), map[string]any{"certificate_id": cert})
}

// TestDomainBase runs a server with its own base domain and address pool host.
func TestDomainBase(t *testing.T) {
	c := newTC(t, func(o *apiserver.Options) { o.DomainBase = " Edge.Example.NET. " })
	owned := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "app.edge.example.net"})
	equal(t, "owned", owned["cname_target"], nil)
	brought := c.ok(201, "POST", "/reserved_domains", map[string]any{"domain": "*.warren.localhost"})
	if !regexp.MustCompile(`^[a-z2-7]{16}\.[a-z2-7]{16}\.cname\.edge\.example\.net$`).MatchString(str(brought["cname_target"])) ||
		!regexp.MustCompile(`^[a-z2-7]{8}\.acme-challenge\.edge\.example\.net$`).MatchString(str(brought["acme_challenge_cname_target"])) {
		t.Fatalf("targets %v %v", brought["cname_target"], brought["acme_challenge_cname_target"])
	}
	c.fails(400, "ERR_404", "POST", "/reserved_domains", map[string]any{"domain": "edge.example.net"})
	c.fails(400, "ERR_450", "POST", "/reserved_domains", map[string]any{"domain": "tcp.edge.example.net"})
	addr := str(c.ok(201, "POST", "/reserved_addrs", nil)["addr"])
	if !strings.HasPrefix(addr, "tcp.edge.example.net:") {
		t.Fatalf("addr %q", addr)
	}

	// Options that make no sense are refused.
	for _, bad := range []apiserver.Options{
		{DomainBase: "localhost"},
		{DomainBase: "*.example.com"},
		{DomainBase: "bad_name.example.com"},
		{AddrPool: apiserver.AddrPool{MinPort: 9, MaxPort: 8}},
		{AddrPool: apiserver.AddrPool{MinPort: 0, MaxPort: 8}},
		{AddrPool: apiserver.AddrPool{MinPort: 1, MaxPort: 65536}},
	} {
		bad.Store, bad.BaseURL = c.srv.Store, "http://127.0.0.1"
		if _, err := apiserver.New(context.Background(), bad); err == nil {
			t.Errorf("New(%+v) succeeded", bad)
		}
	}
}
