package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// testPKI is a CA and a leaf it signed, as PEM.
type testPKI struct {
	caPEM, certPEM, keyPEM string
}

func newTestPKI(t *testing.T, commonName string) testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Warren Test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: commonName, Organization: []string{"Warren"}},
		DNSNames:  []string{commonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	enc := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	return testPKI{caPEM: enc("CERTIFICATE", caDER), certPEM: enc("CERTIFICATE", leafDER) + enc("CERTIFICATE", caDER), keyPEM: enc("PRIVATE KEY", keyDER)}
}

func TestAccTLSCertificate(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_tls_certificate.test"
	pki, pki2 := newTestPKI(t, "app.example.com"), newTestPKI(t, "api.example.com")
	cfg := func(p testPKI, description string) string {
		return env.config(`
resource "warren_tls_certificate" "test" {
  description     = %q
  certificate_pem = %q
  private_key_pem = %q
}`, description, p.certPEM, p.keyPEM)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tls_certificate", getter(env.client.TLSCertificates.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg(pki, "app"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("cert_")),
					stateValue(addr, "subject_common_name", knownvalue.StringExact("app.example.com")),
					stateValue(addr, "issuer_common_name", knownvalue.StringExact("Warren Test CA")),
					stateValue(addr, "subject_organization", knownvalue.StringExact("Warren")),
					stateValue(addr, "private_key_type", knownvalue.StringExact("ecdsa")),
					stateValue(addr, "issued_at", knownvalue.Null()),
					stateValue(addr, "extended_key_usages", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("server_auth")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("subject_alternative_names").AtMapKey("dns_names"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("app.example.com")})),
				},
			},
			{
				Config:           cfg(pki, "app frontend"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
			},
			// The API never returns the key, so the CLI import cannot verify it.
			importSteps(cfg(pki, "app frontend"), addr, "private_key_pem")[0],
			importBlockRecording(cfg(pki, "app frontend"), addr),
			{
				Config:            cfg(pki2, "app frontend"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "subject_common_name", knownvalue.StringExact("api.example.com"))},
			},
			disappears(cfg(pki2, "app frontend"), addr, env.client.TLSCertificates.Delete),
		},
	})
}

// TestAccTLSCertificateWriteOnly gives the key as a write-only value: it reaches the server
// but never the state, and a new version replaces the certificate.
func TestAccTLSCertificateWriteOnly(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_tls_certificate.test"
	pki := newTestPKI(t, "wo.example.com")
	cfg := func(version int) string {
		return env.config(`
resource "warren_tls_certificate" "test" {
  certificate_pem            = %q
  private_key_pem_wo         = %q
  private_key_pem_wo_version = %d
}`, pki.certPEM, pki.keyPEM, version)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tls_certificate", getter(env.client.TLSCertificates.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg(1),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "private_key_pem_wo", knownvalue.Null()),
					stateValue(addr, "private_key_pem", knownvalue.Null()),
					stateValue(addr, "subject_common_name", knownvalue.StringExact("wo.example.com")),
				},
			},
			importBlockRecording(cfg(1), addr),
			{
				Config:           cfg(2),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
			},
		},
	})
}

func TestAccTLSCertificateValidation(t *testing.T) {
	env := newAccEnv(t)
	pki, other := newTestPKI(t, "a.example.com"), newTestPKI(t, "b.example.com")
	step := func(body, pattern string, args ...any) resource.TestStep {
		return resource.TestStep{Config: env.config(body, args...), PlanOnly: true, ExpectError: regexp.MustCompile(pattern)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`resource "warren_tls_certificate" "t" {
  certificate_pem = %q
  private_key_pem = %q
}`, `(?s)do not\s+match`, pki.certPEM, other.keyPEM),
			step(`resource "warren_tls_certificate" "t" {
  certificate_pem = %q
}`, `(?s)Missing Attribute\s+Configuration`, pki.certPEM),
			step(`resource "warren_tls_certificate" "t" {
  certificate_pem    = %q
  private_key_pem    = %q
  private_key_pem_wo = %q
}`, `(?s)Invalid Attribute\s+Combination`, pki.certPEM, pki.keyPEM, pki.keyPEM),
		},
	})
}

func TestAccCertificateAuthority(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_certificate_authority.test"
	pki, pki2 := newTestPKI(t, "x"), newTestPKI(t, "y")
	cfg := func(p testPKI, description string) string {
		return env.config(`
resource "warren_certificate_authority" "test" {
  description = %q
  ca_pem      = %q
}`, description, p.caPEM)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_certificate_authority", getter(env.client.CertificateAuthorities.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg(pki, "clients"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ca_")),
					stateValue(addr, "subject_common_name", knownvalue.StringExact("Warren Test CA")),
					stateValue(addr, "key_usages", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("cert_sign")})),
				},
			},
			{Config: cfg(pki, "client certificates"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate)},
			importSteps(cfg(pki, "client certificates"), addr)[0],
			importSteps(cfg(pki, "client certificates"), addr)[1],
			{Config: cfg(pki2, "client certificates"), ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
			disappears(cfg(pki2, "client certificates"), addr, env.client.CertificateAuthorities.Delete),
		},
	})
}

func TestAccCertificateAuthorityValidation(t *testing.T) {
	env := newAccEnv(t)
	pki := newTestPKI(t, "leaf.example.com")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			// The leaf is not a CA.
			Config:      env.config(`resource "warren_certificate_authority" "t" { ca_pem = %q }`, pki.certPEM),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`ERR|certificate`),
		}},
	})
}

// importBlockRecording imports with an import block. The API never returns the private key,
// so the plan records the configured key (an update in place), never a replacement.
func importBlockRecording(cfg, addr string) resource.TestStep {
	return resource.TestStep{
		Config: cfg, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
		ExpectNonEmptyPlan: true,
		ImportPlanChecks:   resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
	}
}

// TestAccTLSCertificateRotation applies the documented example
// (examples/resources/warren_tls_certificate/resource.tf), then rotates the certificate a
// reserved domain serves: with create_before_destroy it is one apply, the domain points at
// the new certificate in place and the old certificate is gone.
func TestAccTLSCertificateRotation(t *testing.T) {
	env := newAccEnv(t)
	example, err := os.ReadFile("../examples/resources/warren_tls_certificate/resource.tf")
	if err != nil {
		t.Fatal(err)
	}
	app, api, shop, rotated := newTestPKI(t, "app.example.com"), newTestPKI(t, "api.example.com"), newTestPKI(t, "shop.example.com"), newTestPKI(t, "shop.example.com")
	// cfg is the example with its PEM files inlined, shop's from the given PKI.
	files := regexp.MustCompile(`file\("\$\{path\.module\}/([a-z.]+)\.(chain|key)\.pem"\)`)
	cfg := func(shop testPKI) string {
		pkis := map[string]testPKI{"app.example.com": app, "api.example.com": api, "shop.example.com": shop}
		return env.config("%s", files.ReplaceAllStringFunc(string(example), func(call string) string {
			m := files.FindStringSubmatch(call)
			if m[2] == "key" {
				return strconv.Quote(pkis[m[1]].keyPEM)
			}
			return strconv.Quote(pkis[m[1]].certPEM)
		}))
	}
	const cert, domain = "warren_tls_certificate.shop", "warren_reserved_domain.shop"
	servesCert := statecheck.CompareValuePairs(domain, tfjsonpath.New("certificate_id"), cert, tfjsonpath.New("id"), compare.ValuesSame())
	var oldID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tls_certificate", getter(env.client.TLSCertificates.Get)),
		Steps: []resource.TestStep{
			{
				Config:            cfg(shop),
				ConfigStateChecks: []statecheck.StateCheck{servesCert},
				Check: func(s *terraform.State) error {
					oldID = s.RootModule().Resources[cert].Primary.ID
					return nil
				},
			},
			{
				Config: cfg(rotated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(cert, plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectResourceAction(domain, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("warren_tls_certificate.app", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{servesCert},
				Check: func(s *terraform.State) error {
					if id := s.RootModule().Resources[cert].Primary.ID; id == oldID {
						return fmt.Errorf("certificate %s was not replaced", id)
					}
					if _, err := env.client.TLSCertificates.Get(context.Background(), oldID); !client.IsNotFound(err) {
						return fmt.Errorf("old certificate %s: got %v, want not found", oldID, err)
					}
					return nil
				},
			},
		},
	})
}
