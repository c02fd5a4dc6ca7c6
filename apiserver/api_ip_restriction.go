package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// An account's IP restriction of type "api" limits which addresses may call this API with the
// account's keys (details.md §1, ERR_220). It is evaluated on every request, in the read
// transaction that resolves the API key, and never cached: replicas share the database, so a
// change made through one is in force on all of them at once.
//
// A caller is allowed when some allow rule of the restriction's policies contains its address
// and no deny rule does: deny wins, whatever the policy or rule order, and a restriction
// without a matching allow rule blocks. A restriction that is not enforced only logs the
// requests it would block (a dry run), so a restriction can be staged and watched first. The
// operator endpoints under /_admin/ are never subject to it: they are the way back in.

const restrictionTypeAPI = "api"

// apiRestrictionAccountKey finds an account's api restriction beside the API key in
// authentication's one query (store.Tx.GetWith).
var apiRestrictionAccountKey = kinds.IPRestrictionAccountKey(restrictionTypeAPI)

// policyRules loads the rules of the given IP policies: the rules reference their policy, so
// one indexed Referrers query per policy finds them.
func policyRules(ctx context.Context, tx store.Tx, policyIDs []string) ([]rules.IPRule, error) {
	var out []rules.IPRule
	for _, policyID := range policyIDs {
		referrers, err := tx.Referrers(ctx, policyID)
		if err != nil {
			return nil, err
		}
		for _, o := range referrers {
			if o.Kind != kinds.IPPolicyRule {
				continue
			}
			var rule api.IPPolicyRule
			if err := json.Unmarshal(o.Doc, &rule); err != nil {
				return nil, err
			}
			r, err := rules.StoredIPRule(&rule)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// apiRestriction returns the account's api restriction, or nil when it has none.
func apiRestriction(ctx context.Context, tx store.Tx, accountID string) (*api.IPRestriction, error) {
	obj, err := tx.Lookup(ctx, kinds.IPRestrictionKey(accountID, restrictionTypeAPI))
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeRestriction(obj)
}

func decodeRestriction(obj *store.Object) (*api.IPRestriction, error) {
	var x api.IPRestriction
	if err := json.Unmarshal(obj.Doc, &x); err != nil {
		return nil, err
	}
	return &x, nil
}

// restrictionVerdict is the outcome of the api restriction for one request.
type restrictionVerdict struct {
	restrictionID string // "" when the account has no api restriction
	allowed       bool
	enforced      bool
}

// checkAPIRestriction evaluates the account's api restriction (stored, nil when the account
// has none) for the caller, inside the authentication transaction. It returns ERR_220 for a
// blocked caller of an enforced restriction; the verdict lets the caller log a dry-run block
// outside the transaction.
func (c *call) checkAPIRestriction(tx store.Tx, stored *store.Object) (restrictionVerdict, error) {
	if stored == nil {
		return restrictionVerdict{}, nil
	}
	x, err := decodeRestriction(stored)
	if err != nil {
		return restrictionVerdict{}, err
	}
	ipRules, err := policyRules(c.r.Context(), tx, api.RefIDs(x.IPPolicies))
	if err != nil {
		return restrictionVerdict{}, err
	}
	v := restrictionVerdict{restrictionID: x.ID, allowed: rules.IPAllowed(ipRules, c.clientIP()), enforced: x.Enforced}
	if !v.allowed && v.enforced {
		return v, apierr.Forbidden("ERR_220", "The IP address %s is not allowed by the account's API IP restriction %s.", c.clientIPText(), x.ID)
	}
	return v, nil
}

// logDryRun records a request that an api restriction which is not enforced would block.
func (c *call) logDryRun(v restrictionVerdict) {
	if v.restrictionID != "" && !v.allowed && !v.enforced {
		c.log.Warn("the API IP restriction is not enforced; it would block this request",
			zap.String("account_id", c.who.accountID),
			zap.String("ip_restriction_id", v.restrictionID),
			zap.String("client_ip", c.clientIPText()),
			zap.String("path", c.r.URL.Path))
	}
}

// guardLockOut refuses a change after which the account's enforced api restriction, with
// policies policyIDs and rules edited by edit, would block the caller of this very request:
// the change would lock its author out. Staging it with enforced=false is the explicit way.
func (c *call) guardLockOut(tx store.Tx, restrictionID string, policyIDs []string, edit func([]rules.IPRule) []rules.IPRule) error {
	ipRules, err := policyRules(c.r.Context(), tx, policyIDs)
	if err != nil {
		return err
	}
	if edit != nil {
		ipRules = edit(ipRules)
	}
	if rules.IPAllowed(ipRules, c.clientIP()) {
		return nil
	}
	return apierr.WithDetail(apierr.BadRequest("ERR_220",
		"This change would lock you out: the enforced API IP restriction %s would not allow your IP address %s. "+
			"Allow that address first, or stage the restriction with enforced: false and enforce it from an allowed address.",
		restrictionID, c.clientIPText()), "param", "enforced")
}

// guardRuleChange applies guardLockOut to a write of one rule of policyID: edit is the rule
// list after the write. Only a policy used by the account's enforced api restriction matters.
func (c *call) guardRuleChange(tx store.Tx, policyID string, edit func([]rules.IPRule) []rules.IPRule) error {
	x, err := apiRestriction(c.r.Context(), tx, c.who.accountID)
	if err != nil || x == nil || !x.Enforced {
		return err
	}
	policies := api.RefIDs(x.IPPolicies)
	if !slices.Contains(policies, policyID) {
		return nil
	}
	return c.guardLockOut(tx, x.ID, policies, edit)
}

// withRule returns rules with r in place of the rule of the same ID, or added.
func withRule(r rules.IPRule) func([]rules.IPRule) []rules.IPRule {
	return func(list []rules.IPRule) []rules.IPRule {
		list = slices.DeleteFunc(list, func(o rules.IPRule) bool { return o.ID == r.ID })
		return append(list, r)
	}
}

// withoutRule returns rules without the rule id.
func withoutRule(id string) func([]rules.IPRule) []rules.IPRule {
	return func(list []rules.IPRule) []rules.IPRule {
		return slices.DeleteFunc(list, func(o rules.IPRule) bool { return o.ID == id })
	}
}

// clientIP is the address the request comes from: the connection's peer, or, when that peer
// is a trusted proxy, the address X-Forwarded-For names for it. The header is walked from the
// right (the entry the nearest proxy appended) skipping trusted proxies, so entries a client
// wrote itself are never believed. An address that cannot be read is the invalid Addr, which
// no rule contains.
func (c *call) clientIP() netip.Addr {
	return clientIP(c.r, c.s.opts.TrustedProxies)
}

func (c *call) clientIPText() string {
	if ip := c.clientIP(); ip.IsValid() {
		return ip.String()
	}
	return "(unknown)"
}

func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	ip := parseHostAddr(r.RemoteAddr)
	if !isTrusted(ip, trusted) {
		return ip
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		ip = parseHostAddr(strings.TrimSpace(hops[i]))
		if !isTrusted(ip, trusted) {
			return ip
		}
	}
	return ip // every hop is a trusted proxy: the leftmost is the client
}

// parseHostAddr reads "ip", "ip:port" or "[ipv6]:port"; IPv4-mapped IPv6 addresses become
// IPv4, so IPv4 rules match them, and a zone is dropped (rules have none). It returns the
// invalid Addr when s is none of these.
func parseHostAddr(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return ip.WithZone("").Unmap()
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	if !ip.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads a comma-separated list of CIDRs or single addresses (the
// --trusted-proxies flag). An empty string is no trusted proxy.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR", part)
			}
			out = append(out, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
