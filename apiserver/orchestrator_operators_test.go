package apiserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// newCSR returns a PEM CSR for a fresh P-256 key with common name cn, and the key.
func newCSR(t *testing.T, cn string) (string, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), key
}

// operatorCACert reads the account's operator CA certificate from the store.
func operatorCACert(t *testing.T, c *tc) *x509.Certificate {
	t.Helper()
	ctx := context.Background()
	var certs []*x509.Certificate
	err := c.srv.Store.Read(ctx, func(tx store.Tx) error {
		objs, err := tx.List(ctx, store.ListQuery{Kind: "operator_ca", AccountID: c.srv.AccountID, Limit: 10})
		for _, o := range objs {
			var doc struct {
				CertPEM string `json:"cert_pem"`
			}
			if err := json.Unmarshal(o.Doc, &doc); err != nil {
				return err
			}
			if strings.Contains(string(o.Doc), "PRIVATE") {
				t.Errorf("the CA's document holds a private key")
			}
			b, _ := pem.Decode([]byte(doc.CertPEM))
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return err
			}
			certs = append(certs, cert)
		}
		return err
	})
	if err != nil || len(certs) != 1 {
		t.Fatalf("operator CAs: %d, %v", len(certs), err)
	}
	return certs[0]
}

func TestOrchestratorOperators(t *testing.T) {
	// A clock the test moves, so updated_at changes without waiting.
	var now atomic.Int64
	now.Store(time.Date(2025, 9, 4, 10, 11, 14, 0, time.UTC).Unix())
	c := newTC(t, func(o *apiserver.Options) {
		o.DomainBase = "edge.example.net"
		o.Now = func() time.Time { return time.Unix(now.Load(), 0) }
	})
	adminID := str(c.ok(201, "POST", "/api_keys", map[string]any{})["owner_id"])

	// A bare operator: every member present, binding with no cert.
	op := c.ok(201, "POST", "/orchestrator_operators", map[string]any{})
	id := str(op["id"])
	equal(t, "prefix", strings.HasPrefix(id, ids.OrchestratorOperator), true)
	equal(t, "members", keysOf(op), []string{"binding", "created_at", "deployment", "enabled_features", "id", "principal", "region", "updated_at", "uri"})
	equal(t, "uri", op["uri"], c.srv.URL+"/orchestrator_operators/"+id)
	equal(t, "updated_at", op["updated_at"], op["created_at"])
	equal(t, "principal", op["principal"], map[string]any{"id": adminID, "uri": ""})
	equal(t, "features", op["enabled_features"], []any{})
	equal(t, "region", op["region"], "global")
	equal(t, "deployment", op["deployment"], map[string]any{"name": "", "namespace": "", "version": "", "cluster_name": ""})
	equal(t, "binding", op["binding"], map[string]any{"endpoint_selectors": nil, "ingress_endpoint": "",
		"cert": map[string]any{"cert": "", "not_before": api.ZeroTime, "not_after": api.ZeroTime}})
	equal(t, "get", c.ok(200, "GET", "/orchestrator_operators/"+id, nil), op)

	// A full operator: features lowercased, a CSR really signed by the account's CA.
	csrPEM, key := newCSR(t, "k8s-operator")
	full := c.ok(201, "POST", "/orchestrator_operators", map[string]any{
		"description": "prod", "metadata": `{"env":"prod"}`, "enabled_features": []string{"Bindings", "INGRESS"}, "region": "eu",
		"deployment": map[string]any{"name": "op", "namespace": "ingress", "version": "0.1.0", "cluster_name": "prod-1"},
		"binding":    map[string]any{"endpoint_selectors": []string{`endpoint.proto == "https"`}, "csr": csrPEM},
	})
	fid := str(full["id"])
	equal(t, "features", full["enabled_features"], []any{"bindings", "ingress"})
	equal(t, "deployment", full["deployment"], map[string]any{"name": "op", "namespace": "ingress", "version": "0.1.0", "cluster_name": "prod-1"})
	binding := full["binding"].(map[string]any)
	equal(t, "selectors", binding["endpoint_selectors"], []any{`endpoint.proto == "https"`})
	equal(t, "ingress endpoint from the domain base", binding["ingress_endpoint"], "ingress.edge.example.net:443")
	issued := binding["cert"].(map[string]any)
	block, _ := pem.Decode([]byte(str(issued["cert"])))
	if block == nil {
		t.Fatalf("cert is not PEM: %v", issued)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca := operatorCACert(t, c)
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Fatalf("the issued certificate is not signed by the operator CA: %v", err)
	}
	equal(t, "CA is a CA", ca.IsCA, true)
	equal(t, "public key", cert.PublicKey.(*ecdsa.PublicKey).Equal(&key.PublicKey), true)
	equal(t, "common name", cert.Subject.CommonName, "k8s-operator")
	equal(t, "client auth", cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	equal(t, "not_before", issued["not_before"], api.FormatTime(cert.NotBefore))
	equal(t, "not_after", issued["not_after"], api.FormatTime(cert.NotAfter))
	equal(t, "a year from now", [2]string{api.FormatTime(cert.NotBefore), api.FormatTime(cert.NotAfter)}, [2]string{"2025-09-04T10:11:14Z", "2026-09-04T10:11:14Z"})

	// A second CSR in a PATCH: the same CA signs it (still one CA in the store).
	csr2, key2 := newCSR(t, "k8s-operator-2")
	now.Add(90)
	patched := c.ok(200, "PATCH", "/orchestrator_operators/"+fid, map[string]any{
		"deployment": map[string]any{"name": "op2", "version": "0.2.0", "namespace": "ingress"},
		"binding":    map[string]any{"csr": csr2, "ingress_endpoint": "ingress.example.com:8443"},
	})
	equal(t, "name and version change", patched["deployment"], map[string]any{"name": "op2", "namespace": "ingress", "version": "0.2.0", "cluster_name": "prod-1"})
	equal(t, "updated_at", patched["updated_at"], "2025-09-04T10:12:44Z")
	equal(t, "created_at kept", patched["created_at"], full["created_at"])
	pb := patched["binding"].(map[string]any)
	equal(t, "selectors kept", pb["endpoint_selectors"], []any{`endpoint.proto == "https"`})
	equal(t, "ingress endpoint given", pb["ingress_endpoint"], "ingress.example.com:8443")
	block, _ = pem.Decode([]byte(str(pb["cert"].(map[string]any)["cert"])))
	cert2, err := x509.ParseCertificate(block.Bytes)
	if err != nil || cert2.CheckSignatureFrom(operatorCACert(t, c)) != nil || !cert2.PublicKey.(*ecdsa.PublicKey).Equal(&key2.PublicKey) {
		t.Fatalf("second certificate: %v", err)
	}
	equal(t, "features kept", patched["enabled_features"], []any{"bindings", "ingress"})

	// Every rejected write has its code and changes nothing.
	count := func() int { return len(c.ok(200, "GET", "/orchestrator_operators", nil)["operators"].([]any)) }
	before := count()
	bindings := []string{"bindings"}
	for _, tt := range []struct {
		body  map[string]any
		code  string
		param string
	}{
		{map[string]any{"enabled_features": []string{"egress"}}, "ERR_215", "enabled_features"},
		{map[string]any{"enabled_features": []string{"ingress", "Ingress"}}, "ERR_215", "enabled_features"},
		{map[string]any{"region": "mars"}, "ERR_215", "region"},
		{map[string]any{"description": strings.Repeat("d", 256)}, "ERR_215", "description"},
		{map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_100", "metadata"},
		{map[string]any{"deployment": map[string]any{"name": "a\nb"}}, "ERR_215", "deployment.name"},
		{map[string]any{"deployment": map[string]any{"replicas": 2}}, "ERR_214", ""},
		{map[string]any{"binding": map[string]any{"csr": csrPEM}}, "ERR_215", "binding"},
		{map[string]any{"enabled_features": []string{"ingress"}, "binding": map[string]any{}}, "ERR_215", "binding"},
		{map[string]any{"enabled_features": bindings, "binding": map[string]any{"csr": "not a csr"}}, "ERR_215", "binding.csr"},
		{map[string]any{"enabled_features": bindings, "binding": map[string]any{"csr": strings.Replace(csrPEM, "CERTIFICATE REQUEST", "CERTIFICATE", 2)}}, "ERR_215", "binding.csr"},
		{map[string]any{"enabled_features": bindings, "binding": map[string]any{"endpoint_selectors": []string{"endpoint.nope == 1"}}}, "ERR_215", "binding.endpoint_selectors[0]"},
		{map[string]any{"enabled_features": bindings, "binding": map[string]any{"endpoint_selectors": []string{"true", "endpoint.proto"}}}, "ERR_215", "binding.endpoint_selectors[1]"},
		{map[string]any{"enabled_features": bindings, "binding": map[string]any{"ingress_endpoint": "no-port"}}, "ERR_215", "binding.ingress_endpoint"},
		{map[string]any{"binding": map[string]any{"cert": "x"}}, "ERR_214", ""},
	} {
		body := c.fails(400, tt.code, "POST", "/orchestrator_operators", tt.body)
		if tt.param != "" {
			equal(t, "param of "+tt.code, body["details"].(map[string]any)["param"], tt.param)
		}
	}
	equal(t, "nothing stored", count(), before)
	for _, tt := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"deployment": map[string]any{"namespace": "other"}}, "deployment.namespace"},
		{map[string]any{"deployment": map[string]any{"cluster_name": "prod-2", "name": "x"}}, "deployment.cluster_name"},
		{map[string]any{"binding": map[string]any{"endpoint_selectors": []string{"1 +"}}}, "binding.endpoint_selectors[0]"},
		{map[string]any{"enabled_features": []string{"ingress"}, "binding": map[string]any{"endpoint_selectors": []string{"true"}}}, "binding"},
	} {
		body := c.fails(400, "ERR_215", "PATCH", "/orchestrator_operators/"+fid, tt.body)
		equal(t, "param", body["details"].(map[string]any)["param"], tt.param)
	}
	equal(t, "unchanged", c.ok(200, "GET", "/orchestrator_operators/"+fid, nil), patched)

	// Turning the bindings feature off clears the binding; [] clears the selectors.
	cleared := c.ok(200, "PATCH", "/orchestrator_operators/"+fid, map[string]any{"binding": map[string]any{"endpoint_selectors": []string{}}})
	equal(t, "selectors cleared", cleared["binding"].(map[string]any)["endpoint_selectors"], nil)
	off := c.ok(200, "PATCH", "/orchestrator_operators/"+fid, map[string]any{"enabled_features": []string{"gateway"}, "region": "us", "description": ""})
	equal(t, "binding gone", off["binding"], op["binding"])
	equal(t, "region", off["region"], "us")
	_, hasDescription := off["description"]
	equal(t, "description cleared", hasDescription, false)

	// A service user's operator names it as principal; lists page newest first.
	su := c.ok(201, "POST", "/service_users", map[string]any{"name": "operator-bot"})
	bot := c.as(str(c.ok(201, "POST", "/api_keys", map[string]any{"owner_id": su["id"]})["token"]))
	botOp := bot.ok(201, "POST", "/orchestrator_operators", map[string]any{})
	equal(t, "service user principal", botOp["principal"], map[string]any{"id": su["id"], "uri": ""})
	page := c.ok(200, "GET", "/orchestrator_operators?limit=2", nil)
	equal(t, "page", []any{page["operators"].([]any)[0].(map[string]any)["id"], page["operators"].([]any)[1].(map[string]any)["id"]}, []any{botOp["id"], fid})
	equal(t, "next", page["next_page_uri"], c.srv.URL+"/orchestrator_operators?before_id="+fid+"&limit=2")
	c.fails(400, "ERR_231", "GET", "/orchestrator_operators?filter=true", nil)

	c.ok(204, "DELETE", "/orchestrator_operators/"+id, nil)
	if r := c.req("GET", "/orchestrator_operators/"+id, nil); r.status != 404 {
		t.Fatalf("deleted operator: %d", r.status)
	}
}

// putEndpoint stores an endpoint as agents do (kind "endpoint", the api.Endpoint document).
func putEndpoint(t *testing.T, c *tc, accountID string, e api.Endpoint) string {
	t.Helper()
	ctx := context.Background()
	e.ID = ids.New(ids.Endpoint)
	doc, _ := json.Marshal(e)
	err := c.srv.Store.Write(ctx, func(tx store.Tx) error {
		return tx.Insert(ctx, &store.Object{Kind: "endpoint", ID: e.ID, AccountID: accountID, Doc: doc})
	})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func TestOperatorBoundEndpoints(t *testing.T) {
	c := newTC(t)
	op := c.ok(201, "POST", "/orchestrator_operators", map[string]any{"enabled_features": []string{"bindings"},
		"binding": map[string]any{"endpoint_selectors": []string{`endpoint.proto == "https"`, `endpoint.metadata == "k8s"`}}})
	id := str(op["id"])
	path := "/orchestrator_operators/" + id + "/bound_endpoints"
	empty := c.ok(200, "GET", path, nil)
	equal(t, "empty list", empty, map[string]any{"endpoints": []any{}, "uri": c.srv.URL + path, "next_page_uri": nil})

	orch := []string{"orchestrator"}
	https1 := putEndpoint(t, c, c.srv.AccountID, api.Endpoint{Proto: "https", URL: "https://a.example.com", Bindings: orch})
	putEndpoint(t, c, c.srv.AccountID, api.Endpoint{Proto: "https", Bindings: []string{"public"}}) // not bound to an orchestrator
	tcp := putEndpoint(t, c, c.srv.AccountID, api.Endpoint{Proto: "tcp", Metadata: "k8s", Bindings: orch})
	putEndpoint(t, c, c.srv.AccountID, api.Endpoint{Proto: "tls", Bindings: orch}) // no selector matches
	https2 := putEndpoint(t, c, c.srv.AccountID, api.Endpoint{Proto: "https", Bindings: orch})
	// Another account's endpoints are never listed, and its callers do not see the operator.
	other := c.as(c.srv.AdminToken).ok(201, "POST", "/_admin/accounts", map[string]any{"name": "other", "admin_email": "o@example.com"})
	putEndpoint(t, c, str(other["account"].(map[string]any)["id"]), api.Endpoint{Proto: "https", Bindings: orch})
	if r := c.as(str(other["api_key"].(map[string]any)["token"])).req("GET", path, nil); r.status != 404 {
		t.Fatalf("another account's caller: %d", r.status)
	}
	list := c.ok(200, "GET", path, nil)["endpoints"].([]any)
	var got []any
	for _, e := range list {
		got = append(got, e.(map[string]any)["id"])
	}
	equal(t, "bound", got, []any{https2, tcp, https1})
	first := list[2].(map[string]any)
	equal(t, "uri", first["uri"], c.srv.URL+"/endpoints/"+https1)
	equal(t, "url", first["url"], "https://a.example.com")

	page := c.ok(200, "GET", path+"?limit=2", nil)
	equal(t, "page size", len(page["endpoints"].([]any)), 2)
	equal(t, "next", page["next_page_uri"], c.srv.URL+path+"?before_id="+tcp+"&limit=2")
	rest := c.ok(200, "GET", path+"?before_id="+tcp, nil)
	equal(t, "rest", rest["endpoints"].([]any)[0].(map[string]any)["id"], https1)
	c.fails(400, "ERR_227", "GET", path+"?before_id="+id, nil)
	c.fails(400, "ERR_231", "GET", path+"?filter=true", nil)

	// An operator without selectors binds nothing; another account's operator is a 404.
	bare := c.ok(201, "POST", "/orchestrator_operators", map[string]any{})
	equal(t, "no selectors", c.ok(200, "GET", "/orchestrator_operators/"+str(bare["id"])+"/bound_endpoints", nil)["endpoints"], []any{})
	if r := c.req("GET", "/orchestrator_operators/"+ids.New(ids.OrchestratorOperator)+"/bound_endpoints", nil); r.status != 404 {
		t.Fatalf("unknown operator: %d", r.status)
	}
}
