package provider

import (
	"crypto/ed25519"
	"crypto/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"golang.org/x/crypto/ssh"
)

func newPublicKey(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))) + " test@warren"
}

func TestAccSSHCredential(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_ssh_credential.test"
	key1, key2 := newPublicKey(t), newPublicKey(t)
	cfg := func(key, description string) string {
		return env.config(`
resource "warren_ssh_credential" "test" {
  public_key  = %q
  description = %q
  acl         = ["bind:ssh.example.com"]
}`, key, description)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ssh_credential", getter(env.client.SSHCredentials.Get)),
		Steps: []resource.TestStep{
			{
				Config:           cfg(key1, "laptop"),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("sshcr_")),
					stateValue(addr, "public_key", knownvalue.StringExact(key1)),
					stateValue(addr, "acl", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("bind:ssh.example.com")})),
				},
			},
			{
				Config:            cfg(key1, "work laptop"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "description", knownvalue.StringExact("work laptop"))},
			},
			importSteps(cfg(key1, "work laptop"), addr)[0],
			importSteps(cfg(key1, "work laptop"), addr)[1],
			{
				Config:            cfg(key2, "work laptop"),
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "public_key", knownvalue.StringExact(key2))},
			},
			disappears(cfg(key2, "work laptop"), addr, env.client.SSHCredentials.Delete),
		},
	})
}

func TestAccSSHCredentialValidation(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config:      env.config(`resource "warren_ssh_credential" "test" { public_key = "ssh-ed25519 not-a-key" }`),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`not a valid SSH public key`),
		}},
	})
}
