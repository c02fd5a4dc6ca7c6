package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestAccTunnelCredential(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_tunnel_credential.test"
	userID, _ := env.srv.NewUser(t, api.RoleMember)
	v1 := env.config(`
resource "warren_tunnel_credential" "test" {
  description = "agents"
  acl         = ["bind:*.example.com", "bind:env=prod"]
}`)
	v2 := env.config(`
resource "warren_tunnel_credential" "test" {
  metadata = "m"
}`)
	v3 := env.config(`
resource "warren_tunnel_credential" "test" {
  metadata = "m"
  owner_id = %q
}`, userID)
	var token string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_tunnel_credential", getter(env.client.Credentials.Get)),
		Steps: []resource.TestStep{
			{
				Config:           v1,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("cr_")),
					stateValue(addr, "acl", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("bind:*.example.com"), knownvalue.StringExact("bind:env=prod")})),
					stateValue(addr, "token", knownvalue.StringRegexp(regexp.MustCompile(`^[0-9A-Za-z]{27}_[0-9A-Za-z]{21}$`))),
				},
				Check: func(s *terraform.State) error {
					token = s.RootModule().Resources[addr].Primary.Attributes["token"]
					return nil
				},
			},
			{
				// Removing the ACL and the description clears them in place.
				Config:           v2,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "acl", knownvalue.ListSizeExact(0)),
					stateValue(addr, "description", knownvalue.Null()),
					stateValue(addr, "metadata", knownvalue.StringExact("m")),
				},
				Check: resource.TestCheckResourceAttrWith(addr, "token", func(v string) error { return sameAs(token, v) }),
			},
			importSteps(v2, addr, "token")[0],
			importSteps(v2, addr, "token")[1],
			{
				Config:            v3,
				ConfigPlanChecks:  expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{stateValue(addr, "owner_id", knownvalue.StringExact(userID))},
			},
			disappears(v3, addr, env.client.Credentials.Delete),
		},
	})
}

func TestAccTunnelCredentialValidation(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config:      env.config(`resource "warren_tunnel_credential" "test" { acl = ["connect:example.com"] }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Invalid ACL rule "connect:example.com"`),
			},
			{
				Config:      env.config(`resource "warren_tunnel_credential" "test" { acl = ["bind:host:70000"] }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`port must be a number from 1 to\s+65535`),
			},
		},
	})
}
