package provider

import (
	"context"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The acceptance tests are hermetic: each starts a real API server in-process on a
// temporary database, and Terraform (found on PATH) talks to it through the provider.

var providerFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"warren": providerserver.NewProtocol6WithError(New("test")()),
	"echo":   echoprovider.NewProviderServer(),
}

// accEnv is one test's server and a client to check the API behind Terraform's back.
type accEnv struct {
	srv    *apiservertest.Server
	client *client.Client
	apiKey string
}

// newAccEnv starts a server with the defaults; configure may change its options.
func newAccEnv(t *testing.T, configure ...func(*apiserver.Options)) *accEnv {
	t.Helper()
	srv := apiservertest.Start(t, configure...)
	return &accEnv{srv: srv, apiKey: srv.APIKey, client: client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})}
}

// config prefixes a configuration with the provider block for this test's server.
func (e *accEnv) config(body string, args ...any) string {
	return fmt.Sprintf("provider \"warren\" {\n  api_url = %q\n  api_key = %q\n}\n\n", e.srv.URL, e.apiKey) + fmt.Sprintf(body, args...)
}

// checkDestroyed asks the API that every resource of a type in the state is gone.
func checkDestroyed(resourceType string, get func(context.Context, string) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, rs := range s.RootModule().Resources {
			if rs.Type != resourceType {
				continue
			}
			err := get(context.Background(), rs.Primary.ID)
			if err == nil {
				return fmt.Errorf("%s %s still exists", resourceType, rs.Primary.ID)
			}
			if !client.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
}

// deleteBehindTerraform deletes the object of a resource address through the API.
func deleteBehindTerraform(addr string, del func(context.Context, string) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		return del(context.Background(), rs.Primary.ID)
	}
}

func getter[T any](get func(context.Context, string) (*T, error)) func(context.Context, string) error {
	return func(ctx context.Context, id string) error {
		_, err := get(ctx, id)
		return err
	}
}

// Plan checks used by every resource test.

func expectAction(addr string, action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{
		PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, action)},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
}

// disappears deletes the object behind Terraform's back and expects the next plan to
// create it again.
func disappears(cfg, addr string, del func(context.Context, string) error) resource.TestStep {
	return resource.TestStep{
		Config:             cfg,
		Check:              deleteBehindTerraform(addr, del),
		ExpectNonEmptyPlan: true,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
		},
	}
}

// importSteps imports addr with `terraform import` (state verified) and with an import
// block (which must plan no change).
func importSteps(cfg, addr string, ignore ...string) []resource.TestStep {
	return []resource.TestStep{
		{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: ignore},
		{Config: cfg, ResourceName: addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID},
	}
}

func stateValue(addr, attr string, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), value)
}

var idPattern = func(prefix string) knownvalue.Check {
	return knownvalue.StringRegexp(regexp.MustCompile("^" + prefix + "[0-9A-Za-z]{27}$"))
}

// sameAs fails when a value changed that must not (e.g. a token across an update).
func sameAs(want, got string) error {
	if want == "" || got != want {
		return fmt.Errorf("value changed: %q, want %q", got, want)
	}
	return nil
}

// TestProviderSchemas asks the provider for every schema, as Terraform does first: the
// framework validates each one (attribute names, defaults on computed attributes …).
func TestProviderSchemas(t *testing.T) {
	server, err := providerFactories["warren"]()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	// Every resource can be read back by a data source of the same name.
	for name := range resp.ResourceSchemas {
		if resp.DataSourceSchemas[name] == nil {
			t.Errorf("resource %s has no data source", name)
		}
	}
	if len(resp.ResourceSchemas) == 0 || len(resp.EphemeralResourceSchemas) != 2 {
		t.Errorf("%d resources, %d ephemeral resources", len(resp.ResourceSchemas), len(resp.EphemeralResourceSchemas))
	}
}

// TestAccProviderConfig covers where the provider finds its settings: the provider block,
// the environment, neither (a clear error), and a key the server refuses. It changes the
// environment, so it does not run in parallel.
func TestAccProviderConfig(t *testing.T) {
	env := newAccEnv(t)
	const user = `resource "warren_service_user" "test" { name = "from-env" }`
	t.Setenv("WARREN_API_URL", "")
	t.Setenv("WARREN_API_KEY", "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_service_user", getter(env.client.ServiceUsers.Get)),
		Steps: []resource.TestStep{
			{
				Config:      user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Missing Warren API URL.*Missing Warren API key`),
			},
			{
				PreConfig:   func() { t.Setenv("WARREN_API_URL", env.srv.URL); t.Setenv("WARREN_API_KEY", "notarealtoken") },
				Config:      user,
				ExpectError: regexp.MustCompile(`ERR_202`),
			},
			// A revoked key fails the plan (the provider checks its key), not the first create.
			{
				PreConfig:   func() { t.Setenv("WARREN_API_KEY", revokedKey(t, env)) },
				Config:      user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Warren API key refused.*WARREN_API_KEY.*ERR_203`),
			},
			{
				Config:      "provider \"warren\" {\n  api_url = \"http://127.0.0.1:1\"\n  max_retries = 0\n}\n" + user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Could not check the Warren API key`),
			},
			{
				PreConfig:         func() { t.Setenv("WARREN_API_KEY", env.apiKey) },
				Config:            user,
				ConfigStateChecks: []statecheck.StateCheck{stateValue("warren_service_user.test", "id", idPattern("service_"))},
			},
			// Retry settings: bad values fail the plan, from the block or the environment.
			{
				Config:      `provider "warren" { max_retries = -1 }` + "\n" + user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)max_retries.*at least 0`),
			},
			{
				Config:      `provider "warren" { retry_timeout = "5 minutes" }` + "\n" + user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)retry_timeout.*"5 minutes" is not a positive duration`),
			},
			{
				Config:      `provider "warren" { retry_timeout = "0s" }` + "\n" + user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`"0s" is not a positive duration`),
			},
			{
				PreConfig:   func() { t.Setenv("WARREN_MAX_RETRIES", "many"); t.Setenv("WARREN_RETRY_TIMEOUT", "-5m") },
				Config:      user,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid WARREN_MAX_RETRIES.*Invalid WARREN_RETRY_TIMEOUT`),
			},
			// Good values, from the environment and from the block.
			{
				PreConfig:         func() { t.Setenv("WARREN_MAX_RETRIES", "3"); t.Setenv("WARREN_RETRY_TIMEOUT", "2m") },
				Config:            user,
				ConfigStateChecks: []statecheck.StateCheck{stateValue("warren_service_user.test", "name", knownvalue.StringExact("from-env"))},
			},
			{
				Config:            "provider \"warren\" {\n  max_retries = 0\n  retry_timeout = \"90s\"\n}\n" + user,
				ConfigStateChecks: []statecheck.StateCheck{stateValue("warren_service_user.test", "name", knownvalue.StringExact("from-env"))},
			},
		},
	})
}

// revokedKey is the token of an API key created and deleted again.
func revokedKey(t *testing.T, env *accEnv) string {
	t.Helper()
	key, err := env.client.APIKeys.Create(context.Background(), api.APIKeyCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.client.APIKeys.Delete(context.Background(), key.ID); err != nil {
		t.Fatal(err)
	}
	return *key.Token
}

// TestAccProviderRetrySettings proves that the settings reach the client: against a server
// allowing one request per minute whose clock stands still, the second create is refused,
// and the provider gives up as its settings say. Then the clock moves a minute per request
// so the resources can be destroyed.
func TestAccProviderRetrySettings(t *testing.T) {
	var ticking atomic.Bool
	var ticks atomic.Int64
	base := time.Now()
	env := newAccEnv(t, func(o *apiserver.Options) {
		o.RateLimit = 1
		o.Now = func() time.Time {
			if !ticking.Load() {
				return base
			}
			return base.Add(time.Duration(ticks.Add(1)) * time.Minute)
		}
	})
	two := `resource "warren_ip_policy" "test" {
  count       = 2
  description = "p${count.index}"
}`
	block := func(settings string) string {
		return fmt.Sprintf("provider \"warren\" {\n  api_url = %q\n  api_key = %q\n  %s\n}\n%s", env.srv.URL, env.apiKey, settings, two)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_ip_policy", getter(env.client.IPPolicies.Get)),
		Steps: []resource.TestStep{
			{
				// Retry-After is 60 s: it cannot fit in 2 s, so the provider gives up at once.
				Config:      block(`retry_timeout = "2s"`),
				ExpectError: regexp.MustCompile(`(?s)ERR_226.*gave\s+up\s+after\s+1\s+attempt,.*would\s+come\s+after\s+the\s+retry\s+timeout\s+of\s+2s`),
			},
			{
				Config:      block(`max_retries = 0`),
				ExpectError: regexp.MustCompile(`(?s)ERR_226.*gave\s+up\s+after\s+1\s+attempt\)`),
			},
			{
				PreConfig: func() { ticking.Store(true) },
				Config:    block(""),
			},
		},
	})
}
