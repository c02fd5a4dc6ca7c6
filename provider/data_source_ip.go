package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// NewIPPolicyDataSource is data.warren_ip_policy.
func NewIPPolicyDataSource() datasource.DataSource {
	return &objectDataSource[api.IPPolicy, ipPolicyModel]{
		typeName: "_ip_policy", description: "Reads an IP policy by ID.",
		attributes: ipPolicyDataAttributes(),
		get:        func(c *client.Client) getFunc[api.IPPolicy] { return c.IPPolicies.Get },
		flatten:    flattenIPPolicy,
	}
}

// NewIPPoliciesDataSource is data.warren_ip_policies.
func NewIPPoliciesDataSource() datasource.DataSource {
	return &listDataSource[api.IPPolicy, ipPolicyModel]{
		typeName: "_ip_policies", member: "ip_policies",
		description: "Lists the account's IP policies, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
		attributes:  withID(ipPolicyDataAttributes()),
		list:        func(c *client.Client) listFunc[api.IPPolicy] { return c.IPPolicies.List },
		flatten:     flattenIPPolicy,
	}
}

// NewIPPolicyRuleDataSource is data.warren_ip_policy_rule.
func NewIPPolicyRuleDataSource() datasource.DataSource {
	return &objectDataSource[api.IPPolicyRule, ipPolicyRuleModel]{
		typeName: "_ip_policy_rule", description: "Reads an IP policy rule by ID.",
		attributes: ipPolicyRuleDataAttributes(),
		get:        func(c *client.Client) getFunc[api.IPPolicyRule] { return c.IPPolicyRules.Get },
		flatten:    flattenIPPolicyRule,
	}
}

// NewIPPolicyRulesDataSource is data.warren_ip_policy_rules.
func NewIPPolicyRulesDataSource() datasource.DataSource {
	return &listDataSource[api.IPPolicyRule, ipPolicyRuleModel]{
		typeName: "_ip_policy_rules", member: "ip_policy_rules",
		description: "Lists the account's IP policy rules, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `ip_policy` (the policy ID), `cidr` and `action`.",
		attributes:  withID(ipPolicyRuleDataAttributes()),
		list:        func(c *client.Client) listFunc[api.IPPolicyRule] { return c.IPPolicyRules.List },
		flatten:     flattenIPPolicyRule,
	}
}

// NewIPRestrictionDataSource is data.warren_ip_restriction.
func NewIPRestrictionDataSource() datasource.DataSource {
	return &objectDataSource[api.IPRestriction, ipRestrictionModel]{
		typeName: "_ip_restriction", description: "Reads an IP restriction by ID.",
		attributes: ipRestrictionDataAttributes(),
		get:        func(c *client.Client) getFunc[api.IPRestriction] { return c.IPRestrictions.Get },
		flatten:    flattenIPRestriction,
	}
}

// NewIPRestrictionsDataSource is data.warren_ip_restrictions.
func NewIPRestrictionsDataSource() datasource.DataSource {
	return &listDataSource[api.IPRestriction, ipRestrictionModel]{
		typeName: "_ip_restrictions", member: "ip_restrictions",
		description: "Lists the account's IP restrictions, optionally narrowed by a CEL filter on `id`, `created_at`, `description` and `metadata`.",
		attributes:  withID(ipRestrictionDataAttributes()),
		list:        func(c *client.Client) listFunc[api.IPRestriction] { return c.IPRestrictions.List },
		flatten:     flattenIPRestriction,
	}
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
