package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// IP policy rule values (details.md §10.2).
var (
	IPRuleActions      = []string{"allow", "deny"}
	IPRestrictionTypes = []string{"dashboard", "api", "agent", "endpoints"}
)

// Description and metadata codes of the IP families (details.md §5.3: ERR_1421 is the
// rule's description; the others have no code of their own).
var (
	IPPolicyText      = GenericText
	IPPolicyRuleText  = TextCodes{"ERR_1421", "ERR_100"}
	IPRestrictionText = GenericText
)

// CIDR checks an IP policy rule's CIDR and returns its canonical form: a v4 or v6 prefix
// with a mask (ERR_1413), valid (ERR_1406), written as its network address (ERR_1409, whose
// message names the fix). IPv6 comes back lowercased.
func CIDR(cidr string) (string, error) {
	if cidr == "" {
		return "", violation("ERR_1405", "cidr", "The cidr is required, e.g. 10.0.0.0/8.")
	}
	if !strings.Contains(cidr, "/") {
		if _, err := netip.ParseAddr(cidr); err == nil {
			return "", violation("ERR_1413", "cidr", "The CIDR %s has no mask; write for example %s/%d.", Quote(cidr), cidr, netip.MustParseAddr(cidr).BitLen())
		}
		return "", violation("ERR_1406", "cidr", "%s is not a valid CIDR, e.g. 10.0.0.0/8 or 2001:db8::/32.", Quote(cidr))
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", violation("ERR_1406", "cidr", "%s is not a valid CIDR, e.g. 10.0.0.0/8 or 2001:db8::/32.", Quote(cidr))
	}
	if network := prefix.Masked(); network != prefix {
		return "", violation("ERR_1409", "cidr", "The CIDR %s must use the lowest address of its range: use %s.", Quote(cidr), network)
	}
	return prefix.String(), nil
}

// IPRuleAction checks a rule's action (ERR_1422).
func IPRuleAction(action string) error {
	if !slices.Contains(IPRuleActions, action) {
		return violation("ERR_1422", "action", "The action must be 'allow' or 'deny', not %s.", Quote(action))
	}
	return nil
}

// IPRestrictionType checks a restriction's type (ERR_215).
func IPRestrictionType(kind string) error {
	if !slices.Contains(IPRestrictionTypes, kind) {
		return violation("ERR_215", "type", "The type must be one of %s, not %s.", strings.Join(IPRestrictionTypes, ", "), Quote(kind))
	}
	return nil
}

// IPRule is an IP policy rule as a restriction check needs it.
type IPRule struct {
	ID, Policy string
	Prefix     netip.Prefix
	Deny       bool
}

// StoredIPRule reads a stored rule (its CIDR was checked when it was written).
func StoredIPRule(rule *api.IPPolicyRule) (IPRule, error) {
	prefix, err := netip.ParsePrefix(rule.CIDR)
	if err != nil {
		return IPRule{}, fmt.Errorf("stored rule %s: %w", rule.ID, err)
	}
	return IPRule{ID: rule.ID, Policy: rule.IPPolicy.ID, Prefix: prefix.Masked(), Deny: rule.Action == "deny"}, nil
}

// IPAllowed reports whether rules let ip through, for every kind of IP restriction (the
// API's, the agents', the edge's): an allow rule contains it and no deny rule does; deny
// wins whatever the order, and no allow blocks. An invalid ip is contained by no rule.
func IPAllowed(rules []IPRule, ip netip.Addr) bool {
	ip = ip.Unmap()
	allowed := false
	for _, r := range rules {
		if r.Prefix.Contains(ip) {
			if r.Deny {
				return false
			}
			allowed = true
		}
	}
	return allowed
}
