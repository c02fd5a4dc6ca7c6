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
// copies its configuration into state), so the test can see what Open returned. A list data
// source read during the same run proves the object existed then; once the test is over,
// Close must have deleted every object the runs opened (each plan and apply opens its own).

const ephemeralFilter = `obj.description == "one run"`

func TestAccEphemeralAPIKey(t *testing.T) {
	env := newAccEnv(t)
	// The key is the credential of a second provider configuration: reading through it
	// proves the key works during the run.
	testEphemeral(t, env, fmt.Sprintf(`
ephemeral "warren_api_key" "run" {
  description = "one run"
}

provider "warren" {
  alias   = "run"
  api_url = %q
  api_key = ephemeral.warren_api_key.run.token
}

data "warren_api_keys" "run" {
  provider = warren.run
  filter   = %q
}

provider "echo" {
  data = ephemeral.warren_api_key.run
}

resource "echo" "out" {}
`, env.srv.URL, ephemeralFilter), "data.warren_api_keys.run", "api_keys", "ak_", func(ctx context.Context) (int, error) {
		keys, err := env.client.APIKeys.List(ctx, client.ListOptions{Filter: ephemeralFilter})
		return len(keys), err
	})
}

func TestAccEphemeralTunnelCredential(t *testing.T) {
	env := newAccEnv(t)
	testEphemeral(t, env, fmt.Sprintf(`
ephemeral "warren_tunnel_credential" "run" {
  description = "one run"
  acl         = ["bind:ci.example.com"]
}

data "warren_tunnel_credentials" "run" {
  filter     = %q
  depends_on = [ephemeral.warren_tunnel_credential.run]
}

provider "echo" {
  data = ephemeral.warren_tunnel_credential.run
}

resource "echo" "out" {}
`, ephemeralFilter), "data.warren_tunnel_credentials.run", "tunnel_credentials", "cr_", func(ctx context.Context) (int, error) {
		creds, err := env.client.Credentials.List(ctx, client.ListOptions{Filter: ephemeralFilter})
		return len(creds), err
	})
}

// testEphemeral applies cfg and checks the echoed id and token, that the list data source
// at dataAddr saw exactly one object during the run, and that none is left afterwards.
func testEphemeral(t *testing.T, env *accEnv, cfg, dataAddr, member, prefix string, left func(context.Context) (int, error)) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: env.config("%s", cfg),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("echo.out", tfjsonpath.New("data").AtMapKey("id"), knownvalue.StringRegexp(regexp.MustCompile("^"+prefix))),
				statecheck.ExpectKnownValue("echo.out", tfjsonpath.New("data").AtMapKey("token"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9A-Za-z]{27}_[0-9A-Za-z]{21}$`))),
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New(member), knownvalue.ListSizeExact(1)),
				statecheck.ExpectKnownValue(dataAddr, tfjsonpath.New(member).AtSliceIndex(0).AtMapKey("id"), knownvalue.StringRegexp(regexp.MustCompile("^"+prefix))),
			},
		}},
		CheckDestroy: func(*terraform.State) error {
			n, err := left(context.Background())
			if err == nil && n > 0 {
				err = fmt.Errorf("%d ephemeral objects were not deleted on close", n)
			}
			return err
		},
	})
}
