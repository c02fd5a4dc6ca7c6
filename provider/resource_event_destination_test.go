package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// storedSecrets are the secrets the server keeps for a destination (its secret column):
// what the provider sent, which no response shows.
type storedSecrets struct {
	SecretAccessKey string `json:"secret_access_key"`
	APIKey          string `json:"api_key"`
	ClientSecret    string `json:"client_secret"`
}

// expectStoredSecrets checks the server's stored secrets of the destination at addr.
func expectStoredSecrets(env *accEnv, addr string, want storedSecrets) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		var got storedSecrets
		ctx := context.Background()
		err := env.srv.Store.Read(ctx, func(tx store.Tx) error {
			o, err := tx.Get(ctx, "event_destination", rs.Primary.ID)
			if err != nil {
				return err
			}
			return json.Unmarshal(o.Secret, &got)
		})
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("the server holds %+v, want %+v", got, want)
		}
		return nil
	}
}

func targetValue(addr string, value knownvalue.Check, steps ...string) statecheck.StateCheck {
	p := tfjsonpath.New("target")
	for _, s := range steps {
		p = p.AtMapKey(s)
	}
	return statecheck.ExpectKnownValue(addr, p, value)
}

// TestAccEventDestination: a delivery stream with a role, imported (no change); its auth
// switched to creds in place (the secret reaches the server, the state keeps the configured
// value, and the API's redacted "" never diffs); imported again (the secret is then recorded
// by one update); the format's case changed (no change); the kind changed (replaced);
// disappears.
func TestAccEventDestination(t *testing.T) {
	env := newAccEnv(t)
	const addr = "warren_event_destination.test"
	const role = `auth = { role = { role_arn = "arn:aws:iam::123456789012:role/warren" } }`
	const creds = `auth = { creds = { access_key_id = "AKIAEXAMPLE", secret_access_key = "s3cret" } }`
	stream := func(format, description, auth string) string {
		return env.config(`
resource "warren_event_destination" "test" {
  description = %q
  format      = %q
  target = {
    delivery_stream = {
      delivery_stream_arn = "arn:aws:firehose:eu-west-1:123456789012:deliverystream/warren"
      %s
    }
  }
}`, description, format, auth)
	}
	observability := env.config(`
resource "warren_event_destination" "test" {
  format = "JSON"
  target = {
    observability = {
      api_key = "dd-key"
      service = "warren"
      site    = "datadoghq.eu"
    }
  }
}`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_event_destination", getter(env.client.EventDestinations.Get)),
		Steps: []resource.TestStep{
			{
				Config:           stream("json", "firehose", role),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue(addr, "id", idPattern("ed_")),
					stateValue(addr, "format", knownvalue.StringExact("json")),
					targetValue(addr, knownvalue.StringExact("arn:aws:iam::123456789012:role/warren"), "delivery_stream", "auth", "role", "role_arn"),
					targetValue(addr, knownvalue.Null(), "delivery_stream", "auth", "creds"),
					targetValue(addr, knownvalue.Null(), "observability"),
				},
			},
			importSteps(stream("json", "firehose", role), addr)[0],
			importSteps(stream("json", "firehose", role), addr)[1],
			{
				Config:           stream("json", "firehose with keys", creds),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					targetValue(addr, knownvalue.StringExact("s3cret"), "delivery_stream", "auth", "creds", "secret_access_key"),
					targetValue(addr, knownvalue.Null(), "delivery_stream", "auth", "creds", "secret_access_key_wo"),
					targetValue(addr, knownvalue.Null(), "delivery_stream", "auth", "role"),
				},
				Check: expectStoredSecrets(env, addr, storedSecrets{SecretAccessKey: "s3cret"}),
			},
			// The API never returns the secret: the CLI import cannot verify it, and an import
			// block records it with one update.
			importSteps(stream("json", "firehose with keys", creds), addr, "target.delivery_stream.auth.creds.secret_access_key")[0],
			importBlockRecording(stream("json", "firehose with keys", creds), addr),
			{Config: stream("JSON", "firehose with keys", creds), ConfigPlanChecks: emptyPlan()},
			{
				// Other members of the same kind: in place, and the secret is sent again.
				Config:           stream("json", "firehose with keys", `auth = { creds = { access_key_id = "AKIAOTHER", secret_access_key = "s3cret2" } }`),
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionUpdate),
				Check:            expectStoredSecrets(env, addr, storedSecrets{SecretAccessKey: "s3cret2"}),
			},
			{
				Config:           observability,
				ConfigPlanChecks: expectAction(addr, plancheck.ResourceActionReplace),
				ConfigStateChecks: []statecheck.StateCheck{
					targetValue(addr, knownvalue.Null(), "delivery_stream"),
					targetValue(addr, knownvalue.StringExact("dd-key"), "observability", "api_key"),
					targetValue(addr, knownvalue.Null(), "observability", "tags"),
				},
				Check: expectStoredSecrets(env, addr, storedSecrets{APIKey: "dd-key"}),
			},
			disappears(observability, addr, env.client.EventDestinations.Delete),
		},
	})
}

// TestAccEventDestinationWriteOnly gives the secrets write-only: they reach the server but
// never the state; a PATCH for another reason keeps the stored secret, and a new version
// sends the new one.
func TestAccEventDestinationWriteOnly(t *testing.T) {
	env := newAccEnv(t)
	const obs, logs, stream = "warren_event_destination.obs", "warren_event_destination.logs", "warren_event_destination.stream"
	cfg := func(description, key string, version int) string {
		return env.config(`
resource "warren_event_destination" "obs" {
  description = %[1]q
  format      = "JSON"
  target = {
    observability = {
      api_key_wo         = %[2]q
      api_key_wo_version = %[3]d
      tags               = "env:test"
    }
  }
}

resource "warren_event_destination" "logs" {
  format = "JSON"
  target = {
    cloud_logs_ingestion = {
      tenant_id                   = "72f988bf-86f1-41af-91ab-2d7cd011db47"
      client_id                   = "0b7ed1b2-7a53-4a2c-9f3e-6d4f1f0c2a11"
      client_secret_wo            = "azure-%[2]s"
      client_secret_wo_version    = %[3]d
      logs_ingestion_uri          = "https://warren-dce.westeurope-1.ingest.monitor.azure.com"
      data_collection_rule_id     = "dcr-00112233445566778899aabbccddeeff"
      data_collection_stream_name = "Custom-WarrenEvents"
    }
  }
}

resource "warren_event_destination" "stream" {
  format = "JSON"
  target = {
    data_stream = {
      stream_arn = "arn:aws-cn:kinesis:cn-north-1:123456789012:stream/warren"
      auth = { creds = {
        access_key_id                = "AKIAEXAMPLE"
        secret_access_key_wo         = "aws-%[2]s"
        secret_access_key_wo_version = %[3]d
      } }
    }
  }
}`, description, key, version)
	}
	noSecretInState := []statecheck.StateCheck{
		targetValue(obs, knownvalue.Null(), "observability", "api_key"),
		targetValue(obs, knownvalue.Null(), "observability", "api_key_wo"),
		targetValue(obs, knownvalue.Int64Exact(1), "observability", "api_key_wo_version"),
		targetValue(logs, knownvalue.Null(), "cloud_logs_ingestion", "client_secret"),
		targetValue(logs, knownvalue.Null(), "cloud_logs_ingestion", "client_secret_wo"),
		targetValue(stream, knownvalue.Null(), "data_stream", "auth", "creds", "secret_access_key"),
		targetValue(stream, knownvalue.Null(), "data_stream", "auth", "creds", "secret_access_key_wo"),
	}
	stored := func(key string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			expectStoredSecrets(env, obs, storedSecrets{APIKey: key}),
			expectStoredSecrets(env, logs, storedSecrets{ClientSecret: "azure-" + key}),
			expectStoredSecrets(env, stream, storedSecrets{SecretAccessKey: "aws-" + key}),
		)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_event_destination", getter(env.client.EventDestinations.Get)),
		Steps: []resource.TestStep{
			{
				Config:            cfg("first", "k1", 1),
				ConfigPlanChecks:  expectAction(obs, plancheck.ResourceActionCreate),
				ConfigStateChecks: noSecretInState,
				Check:             stored("k1"),
			},
			{
				// Same version: the description changes, the stored key stays.
				Config:            cfg("second", "k2", 1),
				ConfigPlanChecks:  expectAction(obs, plancheck.ResourceActionUpdate),
				ConfigStateChecks: noSecretInState,
				Check: resource.ComposeAggregateTestCheckFunc(
					expectStoredSecrets(env, obs, storedSecrets{APIKey: "k1"}),
					expectStoredSecrets(env, logs, storedSecrets{ClientSecret: "azure-k1"}),
				),
			},
			{
				Config: cfg("second", "k2", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(obs, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(logs, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(stream, plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: stored("k2"),
			},
			importSteps(cfg("second", "k2", 2), logs, "target.cloud_logs_ingestion.client_secret_wo_version")[0],
		},
	})
}

// TestAccEventDestinationValidation: the target rules fail the plan, also when a value is
// null or known only at apply.
func TestAccEventDestinationValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(target, pattern string) resource.TestStep {
		return resource.TestStep{
			Config: env.config(`
resource "terraform_data" "later" { input = "later" }
resource "warren_event_destination" "t" {
  format = "JSON"
  target = {
%s
  }
}`, target),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(pattern),
		}
	}
	const arn = `delivery_stream_arn = "arn:aws:firehose:eu-west-1:1:deliverystream/x"`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(``, `(?s)Missing Attribute\s+Configuration.*exactly one of`),
			step(`observability = { api_key = "k" }
    log_group = { log_group_arn = "arn:aws:logs:eu-west-1:1:log-group:x", auth = { role = { role_arn = "arn:aws:iam::1:role/r" } } }`, `(?s)Invalid Attribute\s+Combination`),
			// A kind known only at apply counts as set.
			step(`observability = { api_key = "k" }
    log_group = terraform_data.later.output == "" ? null : { log_group_arn = "arn:aws:logs:eu-west-1:1:log-group:x", auth = { role = { role_arn = "arn:aws:iam::1:role/r" } } }`, `(?s)Invalid Attribute\s+Combination.*known\s+only\s+after\s+apply`),
			step(`delivery_stream = { `+arn+` }`, `(?s)auth.*required`),
			step(`delivery_stream = { `+arn+`, auth = {} }`, `(?s)Missing Attribute\s+Configuration.*role`),
			step(`delivery_stream = { `+arn+`, auth = { role = { role_arn = "arn:aws:iam::1:role/r" }, creds = { access_key_id = "a", secret_access_key = "s" } } }`, `(?s)Invalid Attribute\s+Combination`),
			step(`delivery_stream = { `+arn+`, auth = { creds = { access_key_id = "a" } } }`, `(?s)Missing Attribute\s+Configuration.*secret_access_key`),
			step(`delivery_stream = { `+arn+`, auth = { creds = { access_key_id = "a", secret_access_key = null } } }`, `(?s)Missing Attribute\s+Configuration.*secret_access_key`),
			step(`delivery_stream = { `+arn+`, auth = { creds = { access_key_id = "a", secret_access_key = "s", secret_access_key_wo = "s" } } }`, `(?s)Invalid Attribute\s+Combination`),
			// A secret known only at apply is set: it conflicts with the write-only one.
			step(`delivery_stream = { `+arn+`, auth = { creds = { access_key_id = "a", secret_access_key = terraform_data.later.output, secret_access_key_wo = "s" } } }`, `(?s)Invalid Attribute\s+Combination.*known\s+only\s+after\s+apply`),
			step(`observability = { api_key = "k", api_key_wo_version = 1 }`, `(?s)api_key_wo_version is set, so\s+target.observability.api_key_wo must be set`),
			step(`delivery_stream = { delivery_stream_arn = "arn:aws:firehose:eu-west-1:1:deliverystream/x", auth = { role = { role_arn = "arn:aws:iam::1:user/r" } } }`, `(?s)Invalid\s+role_arn:.*does\s+not\s+name\s+a\s+role`),
			step(`data_stream = { stream_arn = "arn:aws:firehose:eu-west-1:1:stream/x", auth = { role = { role_arn = "arn:aws:iam::1:role/r" } } }`, `(?s)names\s+the\s+service\s+"firehose";\s+expected\s+kinesis`),
			step(`log_group = { log_group_arn = "not-an-arn", auth = { role = { role_arn = "arn:aws:iam::1:role/r" } } }`, `(?s)"not-an-arn"\s+is\s+not\s+an\s+ARN`),
			step(`observability = { api_key = "k", site = "example.com" }`, `(?s)Invalid\s+site\s+"example.com"`),
			step(`cloud_logs_ingestion = {
      tenant_id = "tenant", client_id = "0b7ed1b2-7a53-4a2c-9f3e-6d4f1f0c2a11", client_secret = "s"
      logs_ingestion_uri = "https://x.example.com", data_collection_rule_id = "dcr-00112233445566778899aabbccddeeff", data_collection_stream_name = "Custom-X"
    }`, `(?s)The\s+tenant_id\s+"tenant"\s+is\s+not\s+a\s+GUID`),
			step(`cloud_logs_ingestion = {
      tenant_id = "72f988bf-86f1-41af-91ab-2d7cd011db47", client_id = "0b7ed1b2-7a53-4a2c-9f3e-6d4f1f0c2a11", client_secret_wo = "s"
      logs_ingestion_uri = "http://x.example.com", data_collection_rule_id = "dcr-00112233445566778899aabbccddeeff", data_collection_stream_name = "Custom-X"
    }`, `(?s)The\s+logs_ingestion_uri\s+"http://x.example.com"\s+is\s+not\s+an\s+https\s+URL`),
			{
				Config: env.config(`resource "warren_event_destination" "t" {
  format = "XML"
  target = { observability = { api_key = "k" } }
}`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Invalid format "XML"`),
			},
			{
				// An ARN known only at apply is checked by the server: the plan passes.
				Config: env.config(`
resource "terraform_data" "later" { input = "later" }
resource "warren_event_destination" "t" {
  format = "JSON"
  target = { log_group = { log_group_arn = terraform_data.later.output, auth = { role = { role_arn = "arn:aws:iam::1:role/r" } } } }
}`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// TestAccEventExamples applies the documented examples of both resources: they plan, apply
// and plan no change again, and the write-only key reaches the server.
func TestAccEventExamples(t *testing.T) {
	env := newAccEnv(t)
	example := func(name string) string {
		b, err := os.ReadFile("../examples/resources/" + name + "/resource.tf")
		if err != nil {
			t.Fatal(err)
		}
		return env.config("%s", b)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             checkDestroyed("warren_event_destination", getter(env.client.EventDestinations.Get)),
		Steps: []resource.TestStep{
			{
				Config:           example("warren_event_destination"),
				ConfigVariables:  config.Variables{"observability_api_key": config.StringVariable("dd-example")},
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            expectStoredSecrets(env, "warren_event_destination.logs", storedSecrets{APIKey: "dd-example"}),
			},
			{
				Config:           example("warren_event_subscription"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					stateValue("warren_event_subscription.audit", "sources", knownvalue.SetSizeExact(5)),
				},
			},
		},
	})
}
