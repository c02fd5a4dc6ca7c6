package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestAccHTTPResponseBackend(t *testing.T) {
	env := newAccEnv(t)
	backendCase(t, env, "http_response_backend", "bkdhr_",
		`resource "warren_http_response_backend" "test" {
  body    = "maintenance"
  headers = { "Content-Type" = "text/plain" }
}`,
		`resource "warren_http_response_backend" "test" {
  body        = "gone"
  status_code = 410
  headers     = { "content-type" = "text/plain", "retry-after" = "3600" }
}`,
		[]statecheck.StateCheck{
			stateValue("warren_http_response_backend.test", "status_code", knownvalue.Int64Exact(200)),
			// The API lowercases names; the configured spelling stays, so there is no diff.
			stateValue("warren_http_response_backend.test", "headers", knownvalue.MapExact(map[string]knownvalue.Check{"Content-Type": knownvalue.StringExact("text/plain")})),
		},
		getter(env.client.HTTPResponseBackends.Get), env.client.HTTPResponseBackends.Delete)
}
