package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccIPValidation(t *testing.T) {
	env := newAccEnv(t)
	step := func(body, pattern string) resource.TestStep {
		return resource.TestStep{Config: env.config("%s", body), PlanOnly: true, ExpectError: regexp.MustCompile(pattern)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{
			step(`resource "warren_ip_policy_rule" "t" {
  ip_policy_id = "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  cidr         = "10.1.2.3/8"
  action       = "allow"
}`, `(?s)use\s+10\.0\.0\.0/8`),
			step(`resource "warren_ip_policy_rule" "t" {
  ip_policy_id = "ipp_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
  cidr         = "10.0.0.0/8"
  action       = "block"
}`, `value must be one of`),
			step(`resource "warren_ip_restriction" "t" {
  type          = "api"
  ip_policy_ids = []
}`, `(?s)at least 1`),
		},
	})
}
