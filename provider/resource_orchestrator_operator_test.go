package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// testCSR is a PEM certificate request for a fresh P-256 key.
func testCSR(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func bindingValue(addr, member string, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New("binding").AtMapKey(member), value)
}

func TestAccOrchestratorOperator(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_orchestrator_operator.test"
	csr1, csr2 := testCSR(t, "op-1"), testCSR(t, "op-2")
	cfg := func(name, namespace, selector, csr string) string {
		return env.config(`
resource "warren_orchestrator_operator" "test" {
  description      = "k8s"
  enabled_features = ["bindings", "ingress"]
  deployment = {
    name      = %q
    namespace = %q
    version   = "0.1.0"
  }
  binding = {
    endpoint_selectors = [%q]
    csr                = %q
  }
}`, name, namespace, selector, csr)
	}
	const data = `
data "warren_orchestrator_operator" "one" {
  id = warren_orchestrator_operator.test.id
}
data "warren_orchestrator_operators" "all" {
  depends_on = [warren_orchestrator_operator.test]
}`
	certPattern := knownvalue.StringRegexp(regexp.MustCompile(`^-----BEGIN CERTIFICATE-----`))
	var firstCert string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_orchestrator_operator", getter(env.client.OrchestratorOperators.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg("op", "ingress", `endpoint.proto == "https"`, csr1) + data,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("orop_")),
					stateValue(addr, "region", knownvalue.StringExact("global")),
					stateValue(addr, "enabled_features", knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("bindings"), knownvalue.StringExact("ingress")})),
					stateValue(addr, "principal_id", idPattern("usr_")),
					bindingValue(addr, "cert", certPattern),
					bindingValue(addr, "ingress_endpoint", knownvalue.StringExact("ingress.warren.localhost:443")),
					statecheck.ExpectKnownValue("data.warren_orchestrator_operator.one", tfjsonpath.New("deployment").AtMapKey("cluster_name"), knownvalue.StringExact("")),
					statecheck.ExpectKnownValue("data.warren_orchestrator_operator.one", tfjsonpath.New("binding").AtMapKey("cert"), certPattern),
					statecheck.ExpectKnownValue("data.warren_orchestrator_operators.all", tfjsonpath.New("orchestrator_operators"), knownvalue.ListSizeExact(1)),
				},
				Check: resource.TestCheckFunc(func(s *terraform.State) error {
					firstCert = s.RootModule().Resources[addr].Primary.Attributes["binding.cert"]
					return nil
				}),
			},
			{
				// Name and selectors change in place, and the certificate stays.
				Config:           cfg("op-2", "ingress", "true", csr1),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "deployment", knownvalue.ObjectPartial(map[string]knownvalue.Check{"name": knownvalue.StringExact("op-2")})),
					bindingValue(addr, "endpoint_selectors", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("true")})),
				},
				Check: resource.TestCheckFunc(func(s *terraform.State) error {
					return sameAs(firstCert, s.RootModule().Resources[addr].Primary.Attributes["binding.cert"])
				}),
			},
			{
				// A new CSR issues a new certificate in place.
				Config:            cfg("op-2", "ingress", "true", csr2),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{bindingValue(addr, "cert", certPattern)},
				Check: resource.TestCheckFunc(func(s *terraform.State) error {
					if s.RootModule().Resources[addr].Primary.Attributes["binding.cert"] == firstCert {
						return fmt.Errorf("the certificate did not change")
					}
					return nil
				}),
			},
			{
				// namespace cannot change: a new operator.
				Config:           cfg("op-2", "other", "true", csr2),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionReplace),
			},
			{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"binding.csr"}},
			disappears(cfg("op-2", "other", "true", csr2), addr, env.client.OrchestratorOperators.Delete),
		},
	})
}

// TestAccOrchestratorOperatorPlain covers an operator without deployment or binding, and both
// import forms.
func TestAccOrchestratorOperatorPlain(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_orchestrator_operator.plain"
	cfg := env.config(`
resource "warren_orchestrator_operator" "plain" {
  enabled_features = ["gateway"]
  region           = "eu"
}`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_orchestrator_operator", getter(env.client.OrchestratorOperators.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "binding", knownvalue.Null()),
					stateValue(addr, "deployment", knownvalue.Null()),
					stateValue(addr, "region", knownvalue.StringExact("eu")),
				},
			},
			importSteps(cfg, addr)[0],
			importSteps(cfg, addr)[1],
		},
	})
}

func TestAccOrchestratorOperatorValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(body, want string) resource.TestStep {
		return resource.TestStep{Config: env.config("%s", body), PlanOnly: true, ExpectError: regexp.MustCompile(want)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`resource "warren_orchestrator_operator" "t" { enabled_features = ["Ingress"] }`, `lowercase`),
			step(`resource "warren_orchestrator_operator" "t" { enabled_features = ["egress"] }`, `not valid`),
			step(`resource "warren_orchestrator_operator" "t" { region = "mars" }`, `not valid`),
			step(`resource "warren_orchestrator_operator" "t" {
  enabled_features = ["ingress"]
  binding = { endpoint_selectors = ["true"] }
}`, `only when enabled_features`),
			step(`resource "warren_orchestrator_operator" "t" {
  enabled_features = ["bindings"]
  binding = { endpoint_selectors = ["endpoint.nope == 1"] }
}`, `not valid CEL`),
			step(`resource "warren_orchestrator_operator" "t" {
  enabled_features = ["bindings"]
  binding = { csr = "nope" }
}`, `csr is not valid`),
			// Unknown and null values pass the plan-time rules: the server checks them at apply.
			step(`variable "f" {
  type    = string
  default = null
}
resource "terraform_data" "x" { input = "bindings" }
resource "warren_orchestrator_operator" "t" {
  enabled_features = [terraform_data.x.output]
  binding = { endpoint_selectors = [var.f == null ? "true" : var.f] }
  deployment = { name = var.f }
}
resource "warren_orchestrator_operator" "u" {
  enabled_features = ["bindings", "bogus"]
}`, `not valid`),
		},
	})
}
