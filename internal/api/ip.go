package api

// IPPolicy is a named set of IP policy rules (/ip_policies, details.md §6.8, §7.8).
type IPPolicy struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
}

// IPPolicyCreate is the body of POST /ip_policies.
type IPPolicyCreate struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}

// IPPolicyUpdate is the body of PATCH /ip_policies/{id}.
type IPPolicyUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}

// IPPolicyRule allows or denies one CIDR within a policy (/ip_policy_rules).
type IPPolicyRule struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	CIDR        string `json:"cidr"`
	IPPolicy    Ref    `json:"ip_policy"`
	Action      string `json:"action" enum:"ip_rule_action"` // allow or deny
}

// IPPolicyRuleCreate is the body of POST /ip_policy_rules.
type IPPolicyRuleCreate struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	CIDR        *string `json:"cidr,omitempty" required:"true"`
	IPPolicyID  *string `json:"ip_policy_id,omitempty" required:"true"`
	Action      *string `json:"action,omitempty" enum:"ip_rule_action" required:"true"`
}

// IPPolicyRuleUpdate is the body of PATCH /ip_policy_rules/{id}: the policy and the action
// cannot change.
type IPPolicyRuleUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	CIDR        *string `json:"cidr,omitempty"`
}

// IPRestriction applies IP policies to one kind of access (/ip_restrictions, details.md §6.16).
type IPRestriction struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	Enforced    bool   `json:"enforced"`
	Type        string `json:"type" enum:"ip_restriction_type"` // dashboard, api, agent or endpoints
	IPPolicies  []Ref  `json:"ip_policies"`
}

// IPRestrictionCreate is the body of POST /ip_restrictions.
type IPRestrictionCreate struct {
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	Enforced    *bool    `json:"enforced,omitempty"`
	Type        *string  `json:"type,omitempty" enum:"ip_restriction_type" required:"true"`
	IPPolicyIDs []string `json:"ip_policy_ids,omitempty" required:"true"`
}

// IPRestrictionUpdate is the body of PATCH /ip_restrictions/{id}; the type cannot change.
type IPRestrictionUpdate struct {
	ID          *string  `json:"id,omitempty"`
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	Enforced    *bool    `json:"enforced,omitempty"`
	IPPolicyIDs []string `json:"ip_policy_ids,omitempty"`
}
