package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The ephemeral resources are surfaced through the echo provider (a test-only provider that
// copies its configuration into state), so the test can see what Open returned. After the
// run, Close must have deleted the object again.

func TestAccEphemeralAPIKey(t *testing.T) {
	env := newAccEnv(t)
	testEphemeral(t, env, `
ephemeral "warren_api_key" "run" {
  description = "one run"
}

provider "echo" {
  data = ephemeral.warren_api_key.run
}

resource "echo" "out" {}
`, "ak_", func(ctx context.Context, id string) error {
		_, err := env.client.APIKeys.Get(ctx, id)
		return err
	})
}

func TestAccEphemeralTunnelCredential(t *testing.T) {
	env := newAccEnv(t)
	testEphemeral(t, env, `
ephemeral "warren_tunnel_credential" "run" {
  description = "one run"
  acl         = ["bind:ci.example.com"]
}

provider "echo" {
  data = ephemeral.warren_tunnel_credential.run
}

resource "echo" "out" {}
`, "cr_", func(ctx context.Context, id string) error {
		_, err := env.client.Credentials.Get(ctx, id)
		return err
	})
}

// testEphemeral applies cfg, checks the echoed id and token, and checks that every object
// Open created during the run has been deleted by Close.
func testEphemeral(t *testing.T, env *accEnv, cfg, prefix string, get func(context.Context, string) error) {
	var seen []string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: env.config("%s", cfg),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("echo.out", tfjsonpath.New("data").AtMapKey("id"), knownvalue.StringRegexp(regexp.MustCompile("^"+prefix))),
				statecheck.ExpectKnownValue("echo.out", tfjsonpath.New("data").AtMapKey("token"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9A-Za-z]{27}_[0-9A-Za-z]{21}$`))),
			},
			Check: func(s *terraform.State) error {
				seen = append(seen, s.RootModule().Resources["echo.out"].Primary.Attributes["data.id"])
				return nil
			},
		}},
		CheckDestroy: func(*terraform.State) error {
			for _, id := range seen {
				if err := get(context.Background(), id); !client.IsNotFound(err) {
					return fmt.Errorf("ephemeral object %s was not deleted on close (get: %v)", id, err)
				}
			}
			if len(seen) == 0 {
				return fmt.Errorf("no ephemeral object was seen")
			}
			return nil
		},
	})
}
