package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// ipPolicies is /ip_policies (details.md §6.8). A policy owns its rules: deleting it deletes
// them, but never while an IP restriction or an ip_restriction module uses it (ERR_1420).
var ipPolicies = &family[api.IPPolicy, *api.IPPolicy, api.IPPolicyCreate, api.IPPolicyUpdate]{
	kind:            kinds.IPPolicy,
	def:             api.IPPolicies,
	filter:          textFields,
	emptyUpdateCode: "ERR_1400",
	create: func(c *call, tx store.Tx, in *api.IPPolicyCreate, p *api.IPPolicy) (any, error) {
		return nil, setText(rules.IPPolicyText, in.Description, in.Metadata, &p.Description, &p.Metadata)
	},
	update: func(c *call, tx store.Tx, in *api.IPPolicyUpdate, p *api.IPPolicy) error {
		return setText(rules.IPPolicyText, in.Description, in.Metadata, &p.Description, &p.Metadata)
	},
	beforeDelete: func(c *call, tx store.Tx, p *api.IPPolicy) error {
		referrers, err := tx.Referrers(c.r.Context(), p.ID)
		if err != nil {
			return err
		}
		var users, policyRules []*store.Object
		for _, r := range referrers {
			if r.Kind == kinds.IPPolicyRule {
				policyRules = append(policyRules, r)
			} else {
				users = append(users, r)
			}
		}
		if len(users) > 0 {
			return stillReferenced("ERR_1420", "The IP policy "+p.ID, users)
		}
		for _, r := range policyRules {
			if err := tx.Delete(c.r.Context(), r.Kind, r.ID); err != nil {
				return err
			}
		}
		return nil
	},
}

// ipPolicyRules is /ip_policy_rules (details.md §6.8, §7.8): one CIDR allowed or denied, in
// canonical network form and unique within its policy. A write that would make the account's
// enforced api restriction block its own caller is refused, as for the restriction itself.
var ipPolicyRules = &family[api.IPPolicyRule, *api.IPPolicyRule, api.IPPolicyRuleCreate, api.IPPolicyRuleUpdate]{
	kind:            kinds.IPPolicyRule,
	def:             api.IPPolicyRules,
	filter:          withFields(textFields, filter.Fields{"ip_policy": filter.String, "cidr": filter.String, "action": filter.String}),
	emptyUpdateCode: "ERR_1401",
	create: func(c *call, tx store.Tx, in *api.IPPolicyRuleCreate, rule *api.IPPolicyRule) (any, error) {
		if err := setText(rules.IPPolicyRuleText, in.Description, in.Metadata, &rule.Description, &rule.Metadata); err != nil {
			return nil, err
		}
		cidr, err := rules.CIDR(deref(in.CIDR))
		if err != nil {
			return nil, err
		}
		if in.IPPolicyID == nil || *in.IPPolicyID == "" {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_1405", "The ip_policy_id is required."), "param", "ip_policy_id")
		}
		if in.Action == nil {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_1405", "The action is required: 'allow' or 'deny'."), "param", "action")
		}
		if err := rules.IPRuleAction(*in.Action); err != nil {
			return nil, err
		}
		if err := requireIPPolicy(c, tx, *in.IPPolicyID); err != nil {
			return nil, err
		}
		rule.CIDR, rule.IPPolicy, rule.Action = cidr, api.Ref{ID: *in.IPPolicyID}, *in.Action
		return nil, guardRule(c, tx, rule)
	},
	update: func(c *call, tx store.Tx, in *api.IPPolicyRuleUpdate, rule *api.IPPolicyRule) error {
		if err := setText(rules.IPPolicyRuleText, in.Description, in.Metadata, &rule.Description, &rule.Metadata); err != nil {
			return err
		}
		if in.CIDR != nil {
			cidr, err := rules.CIDR(*in.CIDR)
			if err != nil {
				return err
			}
			rule.CIDR = cidr
			return guardRule(c, tx, rule)
		}
		return nil
	},
	beforeDelete: func(c *call, tx store.Tx, rule *api.IPPolicyRule) error {
		return c.guardRuleChange(tx, rule.IPPolicy.ID, withoutRule(rule.ID))
	},
	refs: func(rule *api.IPPolicyRule) []string { return []string{rule.IPPolicy.ID} },
	unique: func(_ string, rule *api.IPPolicyRule) []string {
		return []string{kinds.IPPolicyRuleKey(rule.IPPolicy.ID, rule.CIDR)}
	},
	duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
		return apierr.WithDetail(apierr.BadRequest("ERR_1408", "A rule for this CIDR already exists in the policy (%s).", dup.HolderID), "param", "cidr")
	},
	render: func(c *call, rule *api.IPPolicyRule) { rule.IPPolicy = c.ref(rule.IPPolicy.ID) },
}

// requireIPPolicy checks that id is an IP policy of the caller's account (ERR_1414).
func requireIPPolicy(c *call, tx store.Tx, id string) error {
	if _, err := c.lookup(tx, id, ids.IPPolicy); isNotFound(err) {
		return apierr.WithDetail(apierr.BadRequest("ERR_1414", "%s is not an IP policy of this account.", rules.Quote(id)), "param", "ip_policy_id")
	} else if err != nil {
		return err
	}
	return nil
}

// guardRule applies the lock-out rule to a created or changed rule.
func guardRule(c *call, tx store.Tx, rule *api.IPPolicyRule) error {
	r, err := rules.StoredIPRule(rule)
	if err != nil {
		return err
	}
	return c.guardRuleChange(tx, rule.IPPolicy.ID, withRule(r))
}
