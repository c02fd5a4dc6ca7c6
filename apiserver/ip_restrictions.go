package apiserver

import (
	"slices"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// ipRestrictions is /ip_restrictions (details.md §6.16): the IP policies that apply to one
// kind of access, at most one restriction per type and account. The server enforces the
// restriction of type "api" on its own API (api_ip_restriction.go), and refuses a create or
// update after which it would be enforced and block the caller making it (the lock-out
// rule); the one of type "agent" on agents connecting (agentplane_host.go). The dashboard
// type is stored and reported only: the server has no dashboard.
var ipRestrictions = &family[api.IPRestriction, *api.IPRestriction, api.IPRestrictionCreate, api.IPRestrictionUpdate]{
	kind:   kinds.IPRestriction,
	def:    api.IPRestrictions,
	filter: textFields,
	create: func(c *call, tx store.Tx, in *api.IPRestrictionCreate, x *api.IPRestriction) (any, error) {
		if err := setText(rules.IPRestrictionText, in.Description, in.Metadata, &x.Description, &x.Metadata); err != nil {
			return nil, err
		}
		if in.Type == nil {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_1405", "The type is required: dashboard, api, agent or endpoints."), "param", "type")
		}
		if err := rules.IPRestrictionType(*in.Type); err != nil {
			return nil, err
		}
		if in.IPPolicyIDs == nil {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_1405", "The ip_policy_ids are required: at least one IP policy."), "param", "ip_policy_ids")
		}
		policies, err := restrictionPolicies(c, tx, in.IPPolicyIDs)
		if err != nil {
			return nil, err
		}
		x.Type, x.Enforced, x.IPPolicies = *in.Type, in.Enforced != nil && *in.Enforced, policies
		return nil, guardRestriction(c, tx, x)
	},
	update: func(c *call, tx store.Tx, in *api.IPRestrictionUpdate, x *api.IPRestriction) error {
		if err := setText(rules.IPRestrictionText, in.Description, in.Metadata, &x.Description, &x.Metadata); err != nil {
			return err
		}
		if in.Enforced != nil {
			x.Enforced = *in.Enforced
		}
		if in.IPPolicyIDs != nil {
			policies, err := restrictionPolicies(c, tx, in.IPPolicyIDs)
			if err != nil {
				return err
			}
			x.IPPolicies = policies
		}
		return guardRestriction(c, tx, x)
	},
	refs: func(x *api.IPRestriction) []string {
		out := make([]string, len(x.IPPolicies))
		for i, p := range x.IPPolicies {
			out[i] = p.ID
		}
		return out
	},
	unique: func(accountID string, x *api.IPRestriction) []string {
		return []string{kinds.IPRestrictionKey(accountID, x.Type)}
	},
	duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
		return apierr.WithDetail(apierr.BadRequest("ERR_1802", "The account already has an IP restriction of this type (%s).", dup.HolderID), "param", "type")
	},
	render: func(c *call, x *api.IPRestriction) {
		for i := range x.IPPolicies {
			x.IPPolicies[i] = c.ref(x.IPPolicies[i].ID)
		}
	},
}

// restrictionPolicies checks the policies of a restriction: at least one, each an IP policy
// of the account (ERR_1414), none twice.
func restrictionPolicies(c *call, tx store.Tx, policyIDs []string) ([]api.Ref, error) {
	if len(policyIDs) == 0 {
		return nil, apierr.WithDetail(apierr.BadRequest("ERR_1405", "An IP restriction needs at least one IP policy."), "param", "ip_policy_ids")
	}
	refs := make([]api.Ref, 0, len(policyIDs))
	for i, id := range policyIDs {
		if slices.Contains(policyIDs[:i], id) {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_215", "The IP policy %s is given more than once.", rules.Quote(id)), "param", "ip_policy_ids")
		}
		if err := requireIPPolicy(c, tx, id); err != nil {
			return nil, err
		}
		refs = append(refs, api.Ref{ID: id})
	}
	return refs, nil
}

// guardRestriction applies the lock-out rule to a restriction as a create or update leaves it.
func guardRestriction(c *call, tx store.Tx, x *api.IPRestriction) error {
	if x.Type != restrictionTypeAPI || !x.Enforced {
		return nil
	}
	return c.guardLockOut(tx, x.ID, api.RefIDs(x.IPPolicies), nil)
}
