package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

func TestAccAPIKey(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_api_key.test"
	v1 := env.config(`
resource "warren_api_key" "test" {
  description = "ci"
  metadata    = "{\"team\":\"infra\"}"
}`)
	v2 := env.config(`
resource "warren_api_key" "test" {
  description = "ci pipeline"
}`)
	v3 := env.config(`
resource "warren_service_user" "bot" {
  name = "bot"
}

resource "warren_api_key" "test" {
  description = "ci pipeline"
  owner_id    = warren_service_user.bot.id
}`)
	var firstToken string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_api_key", getter(env.client.APIKeys.Get)),
		Steps: []resource.TestStep{
			{
				Config:           v1,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ak_")),
					stateValue(addr, "description", knownvalue.StringExact("ci")),
					stateValue(addr, "metadata", knownvalue.StringExact(`{"team":"infra"}`)),
					stateValue(addr, "owner_id", knownvalue.StringRegexp(regexp.MustCompile(`^usr_`))),
					stateValue(addr, "token", knownvalue.StringRegexp(regexp.MustCompile(`^[0-9A-Za-z]{27}_[0-9A-Za-z]{21}$`))),
				},
				Check: func(s *terraform.State) error {
					firstToken = s.RootModule().Resources[addr].Primary.Attributes["token"]
					return nil
				},
			},
			{
				// In place: the token survives, metadata is cleared.
				Config:           v2,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "description", knownvalue.StringExact("ci pipeline")),
					stateValue(addr, "metadata", knownvalue.Null()),
				},
				Check: resource.TestCheckResourceAttrWith(addr, "token", func(v string) error { return sameAs(firstToken, v) }),
			},
			importSteps(v2, addr, "token")[0],
			importSteps(v2, addr, "token")[1],
			{
				// A new owner replaces the key.
				Config:           v3,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.CompareValuePairs(addr, tfjsonpath.New("owner_id"), "warren_service_user.bot", tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			disappears(v3, addr, env.client.APIKeys.Delete),
		},
	})
}

func TestAccAPIKeyValidation(t *testing.T) {
	env := newAccEnv(t)
	_, memberKey := env.srv.NewUser(t, api.RoleMember)
	adminID, _ := env.srv.NewUser(t, api.RoleAdmin)
	member := *env
	member.apiKey = memberKey
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			{
				Config:      env.config(`resource "warren_api_key" "test" { description = %q }`, strings.Repeat("x", 256)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`256 bytes long; the maximum is 255`),
			},
			{
				// Only the server knows roles: a member naming another owner fails at apply.
				Config:      member.config(`resource "warren_api_key" "test" { owner_id = %q }`, adminID),
				ExpectError: regexp.MustCompile(`ERR_630`),
			},
		},
	})
}

func TestAccOwnerMustBeAnID(t *testing.T) {
	env := newAccEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config:      env.config(`resource "warren_tunnel_credential" "t" { owner_id = "someone@example.com" }`),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`must be a user ID`),
		}},
	})
}
