package openapiclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	oc "github.com/warrenhq/terraform-provider-warren/apiserver/internal/openapiclient"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// TestGeneratedClient drives every family through the client oapi-codegen generated from the
// committed OpenAPI document (testdata/openapi.json): a create, a PATCH and a delete of each,
// and a PUT of a module where the family has modules, each checked in the typed answer. A
// document that a third-party generator reads otherwise than the server (a member optional
// that the server requires, an inline union the client sends as {}) fails here.
func TestGeneratedClient(t *testing.T) {
	srv := apiservertest.Start(t, apiservertest.NoRateLimit)
	driveEveryFamily(t, srv.URL, srv.APIKey)
}

// driveEveryFamily is TestGeneratedClient's calls against the server at url (or a proxy in
// front of it), as the holder of apiKey; opts add to the client's options.
func driveEveryFamily(t *testing.T, url, apiKey string, opts ...oc.ClientOption) {
	c := newClient(t, url, apiKey, opts...)
	ctx := context.Background()
	const v = oc.ServiceVersion(api.Version)
	patched := "patched"
	checkPatched := func(t *testing.T, what string, description *string) {
		t.Helper()
		if description == nil || *description != patched {
			t.Fatalf("%s: description %v after the PATCH, want %q", what, description, patched)
		}
	}

	t.Run("api_keys", func(t *testing.T) {
		k := got(c.PostApiKeysWithResponse(ctx, &oc.PostApiKeysParams{ServiceVersion: v}, oc.APIKeyCreate{Description: ptr("k")})).want(t, "create", 201).JSON201
		p := got(c.PatchApiKeysIdWithResponse(ctx, k.Id, &oc.PatchApiKeysIdParams{ServiceVersion: v}, oc.APIKeyUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "api key", p.Description)
		got(c.DeleteApiKeysIdWithResponse(ctx, k.Id, &oc.DeleteApiKeysIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("credentials", func(t *testing.T) {
		k := got(c.PostCredentialsWithResponse(ctx, &oc.PostCredentialsParams{ServiceVersion: v}, oc.CredentialCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchCredentialsIdWithResponse(ctx, k.Id, &oc.PatchCredentialsIdParams{ServiceVersion: v}, oc.CredentialUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "credential", p.Description)
		got(c.DeleteCredentialsIdWithResponse(ctx, k.Id, &oc.DeleteCredentialsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("ssh_credentials", func(t *testing.T) {
		k := got(c.PostSshCredentialsWithResponse(ctx, &oc.PostSshCredentialsParams{ServiceVersion: v}, oc.SSHCredentialCreate{PublicKey: sshPublicKey(t)})).want(t, "create", 201).JSON201
		p := got(c.PatchSshCredentialsIdWithResponse(ctx, k.Id, &oc.PatchSshCredentialsIdParams{ServiceVersion: v}, oc.SSHCredentialUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "ssh credential", p.Description)
		got(c.DeleteSshCredentialsIdWithResponse(ctx, k.Id, &oc.DeleteSshCredentialsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("ssh_certificate_authorities", func(t *testing.T) {
		k := got(c.PostSshCertificateAuthoritiesWithResponse(ctx, &oc.PostSshCertificateAuthoritiesParams{ServiceVersion: v}, oc.SSHCertificateAuthorityCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchSshCertificateAuthoritiesIdWithResponse(ctx, k.Id, &oc.PatchSshCertificateAuthoritiesIdParams{ServiceVersion: v}, oc.SSHCertificateAuthorityUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "ssh CA", p.Description)
		got(c.DeleteSshCertificateAuthoritiesIdWithResponse(ctx, k.Id, &oc.DeleteSshCertificateAuthoritiesIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("service_users", func(t *testing.T) {
		k := got(c.PostServiceUsersWithResponse(ctx, &oc.PostServiceUsersParams{ServiceVersion: v}, oc.ServiceUserCreate{Name: "svc"})).want(t, "create", 201).JSON201
		p := got(c.PatchServiceUsersIdWithResponse(ctx, k.Id, &oc.PatchServiceUsersIdParams{ServiceVersion: v}, oc.ServiceUserUpdate{Name: &patched})).want(t, "patch", 200).JSON200
		if p.Name != patched {
			t.Fatalf("name %q after the PATCH", p.Name)
		}
		got(c.DeleteServiceUsersIdWithResponse(ctx, k.Id, &oc.DeleteServiceUsersIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("bot_users", func(t *testing.T) {
		k := got(c.PostBotUsersWithResponse(ctx, &oc.PostBotUsersParams{ServiceVersion: v}, oc.ServiceUserCreate{Name: "bot"})).want(t, "create", 201).JSON201
		p := got(c.PatchBotUsersIdWithResponse(ctx, k.Id, &oc.PatchBotUsersIdParams{ServiceVersion: v}, oc.ServiceUserUpdate{Active: ptr(false)})).want(t, "patch", 200).JSON200
		if p.Active {
			t.Fatal("still active after the PATCH")
		}
		got(c.DeleteBotUsersIdWithResponse(ctx, k.Id, &oc.DeleteBotUsersIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("tls_certificates", func(t *testing.T) {
		certPEM, keyPEM := certificate(t, false)
		k := got(c.PostTlsCertificatesWithResponse(ctx, &oc.PostTlsCertificatesParams{ServiceVersion: v}, oc.TLSCertificateCreate{CertificatePem: certPEM, PrivateKeyPem: keyPEM})).want(t, "create", 201).JSON201
		p := got(c.PatchTlsCertificatesIdWithResponse(ctx, k.Id, &oc.PatchTlsCertificatesIdParams{ServiceVersion: v}, oc.TLSCertificateUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "certificate", p.Description)
		got(c.DeleteTlsCertificatesIdWithResponse(ctx, k.Id, &oc.DeleteTlsCertificatesIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("certificate_authorities", func(t *testing.T) {
		caPEM, _ := certificate(t, true)
		k := got(c.PostCertificateAuthoritiesWithResponse(ctx, &oc.PostCertificateAuthoritiesParams{ServiceVersion: v}, oc.CertificateAuthorityCreate{CaPem: caPEM})).want(t, "create", 201).JSON201
		p := got(c.PatchCertificateAuthoritiesIdWithResponse(ctx, k.Id, &oc.PatchCertificateAuthoritiesIdParams{ServiceVersion: v}, oc.CertificateAuthorityUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "CA", p.Description)
		got(c.DeleteCertificateAuthoritiesIdWithResponse(ctx, k.Id, &oc.DeleteCertificateAuthoritiesIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("reserved_domains", func(t *testing.T) {
		k := got(c.PostReservedDomainsWithResponse(ctx, &oc.PostReservedDomainsParams{ServiceVersion: v}, oc.ReservedDomainCreate{Domain: "client.example.com"})).want(t, "create", 201).JSON201
		p := got(c.PatchReservedDomainsIdWithResponse(ctx, k.Id, &oc.PatchReservedDomainsIdParams{ServiceVersion: v}, oc.ReservedDomainUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "domain", p.Description)
		got(c.DeleteReservedDomainsIdWithResponse(ctx, k.Id, &oc.DeleteReservedDomainsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("reserved_addrs", func(t *testing.T) {
		k := got(c.PostReservedAddrsWithResponse(ctx, &oc.PostReservedAddrsParams{ServiceVersion: v}, oc.ReservedAddrCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchReservedAddrsIdWithResponse(ctx, k.Id, &oc.PatchReservedAddrsIdParams{ServiceVersion: v}, oc.ReservedAddrUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "address", p.Description)
		got(c.DeleteReservedAddrsIdWithResponse(ctx, k.Id, &oc.DeleteReservedAddrsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("ip_policies", func(t *testing.T) {
		pol := got(c.PostIpPoliciesWithResponse(ctx, &oc.PostIpPoliciesParams{ServiceVersion: v}, oc.IPPolicyCreate{})).want(t, "create", 201).JSON201
		rule := got(c.PostIpPolicyRulesWithResponse(ctx, &oc.PostIpPolicyRulesParams{ServiceVersion: v}, oc.IPPolicyRuleCreate{Cidr: "10.0.0.0/8", IpPolicyId: pol.Id, Action: oc.Allow})).want(t, "create rule", 201).JSON201
		restriction := got(c.PostIpRestrictionsWithResponse(ctx, &oc.PostIpRestrictionsParams{ServiceVersion: v}, oc.IPRestrictionCreate{Type: oc.Endpoints, IpPolicyIds: []string{pol.Id}})).want(t, "create restriction", 201).JSON201
		p := got(c.PatchIpPoliciesIdWithResponse(ctx, pol.Id, &oc.PatchIpPoliciesIdParams{ServiceVersion: v}, oc.IPPolicyUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "policy", p.Description)
		r := got(c.PatchIpPolicyRulesIdWithResponse(ctx, rule.Id, &oc.PatchIpPolicyRulesIdParams{ServiceVersion: v}, oc.IPPolicyRuleUpdate{Cidr: ptr("192.168.0.0/16")})).want(t, "patch rule", 200).JSON200
		if r.Cidr != "192.168.0.0/16" {
			t.Fatalf("cidr %q after the PATCH", r.Cidr)
		}
		x := got(c.PatchIpRestrictionsIdWithResponse(ctx, restriction.Id, &oc.PatchIpRestrictionsIdParams{ServiceVersion: v}, oc.IPRestrictionUpdate{Enforced: ptr(true)})).want(t, "patch restriction", 200).JSON200
		if !x.Enforced {
			t.Fatal("not enforced after the PATCH")
		}
		got(c.DeleteIpRestrictionsIdWithResponse(ctx, restriction.Id, &oc.DeleteIpRestrictionsIdParams{ServiceVersion: v})).want(t, "delete restriction", 204)
		got(c.DeleteIpPolicyRulesIdWithResponse(ctx, rule.Id, &oc.DeleteIpPolicyRulesIdParams{ServiceVersion: v})).want(t, "delete rule", 204)
		got(c.DeleteIpPoliciesIdWithResponse(ctx, pol.Id, &oc.DeleteIpPoliciesIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("event_destinations", func(t *testing.T) {
		target := decode[oc.EventTargetRequest](t, `{"data_stream":{"auth":{"creds":{"access_key_id":"AKIAEXAMPLE","secret_access_key":"s"}},"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/audit"}}`)
		d := got(c.PostEventDestinationsWithResponse(ctx, &oc.PostEventDestinationsParams{ServiceVersion: v}, oc.EventDestinationCreate{Format: "JSON", Target: target})).want(t, "create", 201).JSON201
		p := got(c.PatchEventDestinationsIdWithResponse(ctx, d.Id, &oc.PatchEventDestinationsIdParams{ServiceVersion: v}, oc.EventDestinationUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "destination", p.Description)
		s := got(c.PostEventSubscriptionsWithResponse(ctx, &oc.PostEventSubscriptionsParams{ServiceVersion: v}, oc.EventSubscriptionCreate{DestinationIds: &[]string{d.Id}})).want(t, "create subscription", 201).JSON201
		ps := got(c.PatchEventSubscriptionsIdWithResponse(ctx, s.Id, &oc.PatchEventSubscriptionsIdParams{ServiceVersion: v}, oc.EventSubscriptionUpdate{Description: &patched})).want(t, "patch subscription", 200).JSON200
		checkPatched(t, "subscription", ps.Description)
		got(c.DeleteEventSubscriptionsIdWithResponse(ctx, s.Id, &oc.DeleteEventSubscriptionsIdParams{ServiceVersion: v})).want(t, "delete subscription", 204)
		got(c.DeleteEventDestinationsIdWithResponse(ctx, d.Id, &oc.DeleteEventDestinationsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("orchestrator_operators", func(t *testing.T) {
		k := got(c.PostOrchestratorOperatorsWithResponse(ctx, &oc.PostOrchestratorOperatorsParams{ServiceVersion: v}, oc.OrchestratorOperatorCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchOrchestratorOperatorsIdWithResponse(ctx, k.Id, &oc.PatchOrchestratorOperatorsIdParams{ServiceVersion: v}, oc.OrchestratorOperatorUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "operator", p.Description)
		got(c.DeleteOrchestratorOperatorsIdWithResponse(ctx, k.Id, &oc.DeleteOrchestratorOperatorsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})

	// The backends, and the edges and routes with their modules, which use them.
	static := got(c.PostBackendsStaticWithResponse(ctx, &oc.PostBackendsStaticParams{ServiceVersion: v}, oc.StaticBackendCreate{Address: "127.0.0.1:8080"})).want(t, "create static backend", 201).JSON201
	t.Run("backends", func(t *testing.T) {
		s := got(c.PatchBackendsStaticIdWithResponse(ctx, static.Id, &oc.PatchBackendsStaticIdParams{ServiceVersion: v}, oc.StaticBackendUpdate{Address: ptr("127.0.0.1:9090")})).want(t, "patch static", 200).JSON200
		if s.Address != "127.0.0.1:9090" {
			t.Fatalf("address %q after the PATCH", s.Address)
		}
		fo := got(c.PostBackendsFailoverWithResponse(ctx, &oc.PostBackendsFailoverParams{ServiceVersion: v}, oc.FailoverBackendCreate{Backends: &[]string{static.Id}})).want(t, "create failover", 201).JSON201
		pfo := got(c.PatchBackendsFailoverIdWithResponse(ctx, fo.Id, &oc.PatchBackendsFailoverIdParams{ServiceVersion: v}, oc.FailoverBackendUpdate{Description: &patched})).want(t, "patch failover", 200).JSON200
		checkPatched(t, "failover", pfo.Description)
		if pfo.Backends == nil || !reflect.DeepEqual(*pfo.Backends, []string{static.Id}) {
			t.Fatalf("failover backends %v after a PATCH of its description", pfo.Backends)
		}
		wd := got(c.PostBackendsWeightedWithResponse(ctx, &oc.PostBackendsWeightedParams{ServiceVersion: v}, oc.WeightedBackendCreate{Backends: &map[string]int64{static.Id: 10}})).want(t, "create weighted", 201).JSON201
		pwd := got(c.PatchBackendsWeightedIdWithResponse(ctx, wd.Id, &oc.PatchBackendsWeightedIdParams{ServiceVersion: v}, oc.WeightedBackendUpdate{Backends: &map[string]int64{static.Id: 20}})).want(t, "patch weighted", 200).JSON200
		if pwd.Backends == nil || (*pwd.Backends)[static.Id] != 20 {
			t.Fatalf("weighted backends %v after the PATCH", pwd.Backends)
		}
		hr := got(c.PostBackendsHttpResponseWithResponse(ctx, &oc.PostBackendsHttpResponseParams{ServiceVersion: v}, oc.HTTPResponseBackendCreate{Body: ptr("hi"), StatusCode: ptr(int64(200))})).want(t, "create http_response", 201).JSON201
		phr := got(c.PatchBackendsHttpResponseIdWithResponse(ctx, hr.Id, &oc.PatchBackendsHttpResponseIdParams{ServiceVersion: v}, oc.HTTPResponseBackendUpdate{StatusCode: ptr(int64(503))})).want(t, "patch http_response", 200).JSON200
		if phr.StatusCode != 503 || phr.Body != "hi" {
			t.Fatalf("http_response %d %q after the PATCH", phr.StatusCode, phr.Body)
		}
		tg := got(c.PostBackendsTunnelGroupWithResponse(ctx, &oc.PostBackendsTunnelGroupParams{ServiceVersion: v}, oc.TunnelGroupBackendCreate{Labels: &map[string]string{"app": "a"}})).want(t, "create tunnel_group", 201).JSON201
		ptg := got(c.PatchBackendsTunnelGroupIdWithResponse(ctx, tg.Id, &oc.PatchBackendsTunnelGroupIdParams{ServiceVersion: v}, oc.TunnelGroupBackendUpdate{Labels: &map[string]string{"app": "b"}})).want(t, "patch tunnel_group", 200).JSON200
		if ptg.Labels == nil || (*ptg.Labels)["app"] != "b" {
			t.Fatalf("labels %v after the PATCH", ptg.Labels)
		}
		got(c.DeleteBackendsFailoverIdWithResponse(ctx, fo.Id, &oc.DeleteBackendsFailoverIdParams{ServiceVersion: v})).want(t, "delete failover", 204)
		got(c.DeleteBackendsWeightedIdWithResponse(ctx, wd.Id, &oc.DeleteBackendsWeightedIdParams{ServiceVersion: v})).want(t, "delete weighted", 204)
		got(c.DeleteBackendsHttpResponseIdWithResponse(ctx, hr.Id, &oc.DeleteBackendsHttpResponseIdParams{ServiceVersion: v})).want(t, "delete http_response", 204)
		got(c.DeleteBackendsTunnelGroupIdWithResponse(ctx, tg.Id, &oc.DeleteBackendsTunnelGroupIdParams{ServiceVersion: v})).want(t, "delete tunnel_group", 204)
	})
	backend := func(t *testing.T) oc.BackendModulePut {
		var body oc.BackendModulePut
		if err := body.FromBackendModuleRequest(oc.BackendModuleRequest{BackendId: &static.Id}); err != nil {
			t.Fatal(err)
		}
		return body
	}
	t.Run("edges/https and routes", func(t *testing.T) {
		e := got(c.PostEdgesHttpsWithResponse(ctx, &oc.PostEdgesHttpsParams{ServiceVersion: v}, oc.HTTPSEdgeCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchEdgesHttpsIdWithResponse(ctx, e.Id, &oc.PatchEdgesHttpsIdParams{ServiceVersion: v}, oc.HTTPSEdgeUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "https edge", p.Description)
		var tlsTermination oc.TLSTerminationModulePut
		if err := tlsTermination.FromTLSTerminationModuleRequest(oc.TLSTerminationModuleRequest{MinVersion: ptr(oc.N13)}); err != nil {
			t.Fatal(err)
		}
		m := got(c.PutEdgesHttpsIdTlsTerminationWithResponse(ctx, e.Id, &oc.PutEdgesHttpsIdTlsTerminationParams{ServiceVersion: v}, tlsTermination)).want(t, "put tls_termination", 200).JSON200
		if m.MinVersion == nil || *m.MinVersion != oc.N13 {
			t.Fatalf("tls_termination %+v after the PUT", m)
		}

		r := got(c.PostEdgesHttpsEdgeIdRoutesWithResponse(ctx, e.Id, &oc.PostEdgesHttpsEdgeIdRoutesParams{ServiceVersion: v}, oc.HTTPSEdgeRouteCreate{MatchType: oc.PathPrefix, Match: "/"})).want(t, "create route", 201).JSON201
		pr := got(c.PatchEdgesHttpsEdgeIdRoutesIdWithResponse(ctx, e.Id, r.Id, &oc.PatchEdgesHttpsEdgeIdRoutesIdParams{ServiceVersion: v}, oc.HTTPSEdgeRouteUpdate{Match: ptr("/api")})).want(t, "patch route", 200).JSON200
		if pr.Match != "/api" || pr.MatchType != oc.PathPrefix {
			t.Fatalf("route %s %s after the PATCH", pr.MatchType, pr.Match)
		}
		b := got(c.PutEdgesHttpsEdgeIdRoutesIdBackendWithResponse(ctx, e.Id, r.Id, &oc.PutEdgesHttpsEdgeIdRoutesIdBackendParams{ServiceVersion: v}, backend(t))).want(t, "put route backend", 200).JSON200
		if b.Backend.Id != static.Id || !b.Enabled {
			t.Fatalf("route backend %+v after the PUT", b)
		}
		// enabled:false must reach the server as false, not as an empty body (enabled by default).
		var compression oc.ToggleModulePut
		if err := compression.FromToggleModuleRequest(oc.ToggleModuleRequest{Enabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		cm := got(c.PutEdgesHttpsEdgeIdRoutesIdCompressionWithResponse(ctx, e.Id, r.Id, &oc.PutEdgesHttpsEdgeIdRoutesIdCompressionParams{ServiceVersion: v}, compression)).want(t, "put compression", 200).JSON200
		if cm.Enabled {
			t.Fatal("compression {enabled:false} is enabled after the PUT")
		}
		route := got(c.GetEdgesHttpsEdgeIdRoutesIdWithResponse(ctx, e.Id, r.Id, &oc.GetEdgesHttpsEdgeIdRoutesIdParams{ServiceVersion: v})).want(t, "get route", 200).JSON200
		if route.Compression == nil || route.Compression.Enabled || route.Backend == nil || route.Backend.Backend.Id != static.Id {
			t.Fatalf("route %+v after the PUTs", route)
		}
		got(c.DeleteEdgesHttpsEdgeIdRoutesIdWithResponse(ctx, e.Id, r.Id, &oc.DeleteEdgesHttpsEdgeIdRoutesIdParams{ServiceVersion: v})).want(t, "delete route", 204)
		got(c.DeleteEdgesHttpsIdWithResponse(ctx, e.Id, &oc.DeleteEdgesHttpsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("edges/tcp", func(t *testing.T) {
		e := got(c.PostEdgesTcpWithResponse(ctx, &oc.PostEdgesTcpParams{ServiceVersion: v}, oc.TCPEdgeCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchEdgesTcpIdWithResponse(ctx, e.Id, &oc.PatchEdgesTcpIdParams{ServiceVersion: v}, oc.TCPEdgeUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "tcp edge", p.Description)
		b := got(c.PutEdgesTcpIdBackendWithResponse(ctx, e.Id, &oc.PutEdgesTcpIdBackendParams{ServiceVersion: v}, backend(t))).want(t, "put backend", 200).JSON200
		if b.Backend.Id != static.Id {
			t.Fatalf("backend %+v after the PUT", b)
		}
		got(c.DeleteEdgesTcpIdWithResponse(ctx, e.Id, &oc.DeleteEdgesTcpIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	t.Run("edges/tls", func(t *testing.T) {
		e := got(c.PostEdgesTlsWithResponse(ctx, &oc.PostEdgesTlsParams{ServiceVersion: v}, oc.TLSEdgeCreate{})).want(t, "create", 201).JSON201
		p := got(c.PatchEdgesTlsIdWithResponse(ctx, e.Id, &oc.PatchEdgesTlsIdParams{ServiceVersion: v}, oc.TLSEdgeUpdate{Description: &patched})).want(t, "patch", 200).JSON200
		checkPatched(t, "tls edge", p.Description)
		b := got(c.PutEdgesTlsIdBackendWithResponse(ctx, e.Id, &oc.PutEdgesTlsIdBackendParams{ServiceVersion: v}, backend(t))).want(t, "put backend", 200).JSON200
		if b.Backend.Id != static.Id {
			t.Fatalf("backend %+v after the PUT", b)
		}
		got(c.DeleteEdgesTlsIdWithResponse(ctx, e.Id, &oc.DeleteEdgesTlsIdParams{ServiceVersion: v})).want(t, "delete", 204)
	})
	got(c.DeleteBackendsStaticIdWithResponse(ctx, static.Id, &oc.DeleteBackendsStaticIdParams{ServiceVersion: v})).want(t, "delete static backend", 204)
}

// newClient is a generated client of the server at url (or a proxy in front of it) that calls
// as the holder of apiKey; opts add to its options.
func newClient(t *testing.T, url, apiKey string, opts ...oc.ClientOption) *oc.ClientWithResponses {
	t.Helper()
	opts = append(opts, oc.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+apiKey)
		return nil
	}))
	c, err := oc.NewClientWithResponses(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGeneratedClientIsCurrent regenerates the client from the committed document with the
// pinned oapi-codegen (go generate) and compares it with the committed one.
func TestGeneratedClientIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating the client builds oapi-codegen")
	}
	out := filepath.Join(t.TempDir(), "client.gen.go")
	gen := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "-modfile=../../../tools/oapi-codegen/go.mod", "oapi-codegen",
		"-config", "oapi-codegen.yaml", "-o", out, "../../testdata/openapi.json")
	if msg, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("client.gen.go is not what oapi-codegen generates from testdata/openapi.json: run go generate ./apiserver/internal/openapiclient")
	}
}

// response is what every generated answer has: its status and its raw body.
type response interface{ StatusCode() int }

// answer is a generated call's answer and error.
type answer[R response] struct {
	r   R
	err error
}

func got[R response](r R, err error) answer[R] { return answer[R]{r, err} }

// want fails the test unless the call answered status, and returns the answer.
func (a answer[R]) want(t *testing.T, what string, status int) R {
	t.Helper()
	if a.err != nil {
		t.Fatalf("%s: %v", what, a.err)
	}
	if got := a.r.StatusCode(); got != status {
		t.Fatalf("%s: %d, want %d: %s", what, got, status, reflect.ValueOf(a.r).Elem().FieldByName("Body").Bytes())
	}
	return a.r
}

func ptr[T any](v T) *T { return &v }

// decode reads a generated type from JSON, for bodies with deep unions.
func decode[T any](t *testing.T, data string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// sshPublicKey is a fresh ed25519 public key in authorized_keys form.
func sshPublicKey(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(ssh.MarshalAuthorizedKey(key))
}

// certificate is a fresh self-signed certificate (a CA when ca) and its key, in PEM.
func certificate(t *testing.T, ca bool) (certPEM, keyPEM string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client.example.com"},
		DNSNames: []string{"client.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: ca,
	}
	if ca {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}
