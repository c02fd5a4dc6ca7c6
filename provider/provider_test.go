package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
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

func newAccEnv(t *testing.T) *accEnv {
	t.Helper()
	srv := apiservertest.Start(t)
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
