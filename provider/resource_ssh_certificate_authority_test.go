package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccSSHCertificateAuthority(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ssh_certificate_authority.test"
	ecdsa := func(curve, description string) string {
		return env.config(`
resource "warren_ssh_certificate_authority" "test" {
  description      = %q
  private_key_type = "ecdsa"
  elliptic_curve   = %q
}`, description, curve)
	}
	rsa := env.config(`
resource "warren_ssh_certificate_authority" "test" {
  private_key_type = "rsa"
  key_size         = 2048
}`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ssh_certificate_authority", getter(env.client.SSHCertificateAuthorities.Get)),
		Steps: []resource.TestStep{
			{
				Config:           ecdsa("p384", "hosts"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("sshca_")),
					stateValue(addr, "key_type", knownvalue.StringExact("ecdsa")),
					stateValue(addr, "public_key", knownvalue.StringRegexp(regexp.MustCompile(`^ecdsa-sha2-nistp384 `))),
					stateValue(addr, "key_size", knownvalue.Null()),
				},
			},
			{
				Config:            ecdsa("p384", "host certificates"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "description", knownvalue.StringExact("host certificates"))},
			},
			importSteps(ecdsa("p384", "host certificates"), addr)[0],
			importSteps(ecdsa("p384", "host certificates"), addr)[1],
			{
				Config:           ecdsa("p521", "host certificates"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
			},
			{
				Config:           rsa,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "public_key", knownvalue.StringRegexp(regexp.MustCompile(`^ssh-rsa `))),
					stateValue(addr, "key_size", knownvalue.Int64Exact(2048)),
					stateValue(addr, "elliptic_curve", knownvalue.Null()),
				},
			},
			importSteps(rsa, addr)[0],
			disappears(rsa, addr, env.client.SSHCertificateAuthorities.Delete),
		},
	})
}

func TestAccSSHCertificateAuthorityDefaults(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ssh_certificate_authority.test"
	cfg := env.config(`resource "warren_ssh_certificate_authority" "test" {}`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ssh_certificate_authority", getter(env.client.SSHCertificateAuthorities.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "private_key_type", knownvalue.StringExact("ed25519")),
					stateValue(addr, "public_key", knownvalue.StringRegexp(regexp.MustCompile(`^ssh-ed25519 `))),
				},
			},
			importSteps(cfg, addr)[1],
		},
	})
}

func TestAccSSHCertificateAuthorityValidation(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config:      env.config(`resource "warren_ssh_certificate_authority" "test" { key_size = 2048 }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`key_size may only be given with private_key_type 'rsa'`),
			},
			{
				Config: env.config(`resource "warren_ssh_certificate_authority" "test" {
  private_key_type = "rsa"
  elliptic_curve   = "p256"
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`elliptic_curve may only be given with private_key_type 'ecdsa'`),
			},
			{
				Config: env.config(`resource "warren_ssh_certificate_authority" "test" {
  private_key_type = "rsa"
  key_size         = 1024
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`value must be one of`),
			},
		},
	})
}
