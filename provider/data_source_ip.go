package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// ipPolicyDataSources are data.warren_ip_policy and data.warren_ip_policies.
var ipPolicyDataSources = dataSources[api.IPPolicy, ipPolicyModel]{
	name:        "ip_policy",
	plural:      "ip_policies",
	describeOne: "Reads an IP policy by ID.",
	describeAll: "Lists the account's IP policies, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
	attributes:  ipPolicyDataAttributes,
	flatten:     flattenIPPolicy,
}

// ipPolicyRuleDataSources are data.warren_ip_policy_rule and data.warren_ip_policy_rules.
var ipPolicyRuleDataSources = dataSources[api.IPPolicyRule, ipPolicyRuleModel]{
	name:        "ip_policy_rule",
	plural:      "ip_policy_rules",
	describeOne: "Reads an IP policy rule by ID.",
	describeAll: "Lists the account's IP policy rules, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `ip_policy` (the policy ID), `cidr` and `action`.",
	attributes:  ipPolicyRuleDataAttributes,
	flatten:     flattenIPPolicyRule,
}

// ipRestrictionDataSources are data.warren_ip_restriction and data.warren_ip_restrictions.
var ipRestrictionDataSources = dataSources[api.IPRestriction, ipRestrictionModel]{
	name:        "ip_restriction",
	plural:      "ip_restrictions",
	describeOne: "Reads an IP restriction by ID.",
	describeAll: "Lists the account's IP restrictions, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
	attributes:  ipRestrictionDataAttributes,
	flatten:     flattenIPRestriction,
}

func ipPolicyDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the policy is for."),
		"metadata":    computedString("Arbitrary user data."),
		"created_at":  computedString("When the policy was created (RFC 3339)."),
	}
}

func ipPolicyRuleDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":  computedString("What the rule is for."),
		"metadata":     computedString("Arbitrary user data."),
		"cidr":         computedString("The CIDR."),
		"ip_policy_id": computedString("ID of the rule's IP policy."),
		"action":       computedString("`allow` or `deny`."),
		"created_at":   computedString("When the rule was created (RFC 3339)."),
	}
}

func ipRestrictionDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":   computedString("What the restriction is for."),
		"metadata":      computedString("Arbitrary user data."),
		"enforced":      schema.BoolAttribute{MarkdownDescription: "Whether the restriction is enforced.", Computed: true},
		"type":          computedString("What the restriction applies to."),
		"ip_policy_ids": computedStringList("IDs of the IP policies that apply."),
		"created_at":    computedString("When the restriction was created (RFC 3339)."),
	}
}
