package agentplane

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// A bind opens a tunnel: a hostname (http, https, tls) from the account's reserved domains,
// an address (tcp) from its reserved addresses, or labels that tunnel-group backends select.
// It must be allowed by the credential's ACL (details.md §10.2) as the credential stands
// when the bind is made.

// bindCodeDenied is the code of a bind the credential's ACL does not allow: the catalogue
// has none for it, so it is the generic invalid-value code, with a message naming the rule.
const bindCodeDenied = "ERR_215"

// endpointBindings are the values a tunnel's endpoint may be bound to (details.md §7.5).
var endpointBindings = []string{"public", "internal", "orchestrator"}

// bind opens the tunnel m asks for and answers Bound.
func (a *agentConn) bind(m agentproto.Message) (agentproto.Message, error) {
	if err := checkBind(&m); err != nil {
		return agentproto.Message{}, err
	}
	h := a.hub
	ctx := h.ctx
	now := api.FormatTime(h.host.Now())
	tunnel := api.Tunnel{
		ID: ids.New(ids.Tunnel), StartedAt: now, Region: a.region, Metadata: a.metadata,
		ForwardsTo: m.ForwardsTo, Proto: m.Proto, TunnelSession: api.Ref{ID: a.sessionID}, Labels: m.Labels,
	}
	var ep *api.Endpoint
	var owner string // the reserved domain or address the bind uses
	err := h.store.Write(ctx, func(tx store.Tx) error {
		cred, err := tx.Get(ctx, kinds.Credential, a.credentialID)
		if err != nil {
			return err
		}
		var c api.Credential
		if err := json.Unmarshal(cred.Doc, &c); err != nil {
			return err
		}
		if err := aclAllows(c.ACL, m); err != nil {
			return err
		}
		if m.Labels != nil {
			return insertTunnel(ctx, tx, a.accountID, &tunnel, "")
		}
		if owner, err = h.boundOwner(ctx, tx, a.accountID, m); err != nil {
			return err
		}
		ep = newEndpoint(now, a, m, tunnel.ID, owner)
		tunnel.PublicURL = ep.URL
		tunnel.Endpoint = &api.Ref{ID: ep.ID}
		claim, err := a.claimBind(ctx, tx, m.Proto, ep.Hostport)
		if err == nil {
			err = insertTunnel(ctx, tx, a.accountID, &tunnel, claim)
		}
		if err != nil {
			var dup *store.DuplicateError
			if errors.As(err, &dup) {
				if m.Addr != "" {
					return apierr.BadRequest("ERR_7115", "The address %s is already bound by another tunnel.", m.Addr)
				}
				return apierr.BadRequest("ERR_7119", "The hostname %s is already bound by another tunnel.", m.Hostname)
			}
			return err
		}
		doc, err := json.Marshal(ep)
		if err != nil {
			return err
		}
		// The endpoint holds the tunnel and its domain or address, so neither can be
		// deleted under it (ERR_446 for a domain).
		return tx.Insert(ctx, &store.Object{Kind: kinds.Endpoint, ID: ep.ID, AccountID: a.accountID, Doc: doc, Refs: []string{tunnel.ID, owner}})
	})
	if err != nil {
		return agentproto.Message{}, err
	}
	online := Tunnel{ID: tunnel.ID, AccountID: a.accountID, SessionID: a.sessionID, Proto: m.Proto, ForwardsTo: m.ForwardsTo, Labels: maps.Clone(m.Labels)}
	bound := agentproto.Message{Type: agentproto.TypeBound, ID: m.ID, TunnelID: tunnel.ID}
	if ep != nil {
		bound.EndpointID, bound.URL = ep.ID, ep.URL
		online.Hostport = ep.Hostport
	}
	h.tunnels.add(a, online)
	return bound, nil
}

// insertTunnel stores t, referring to its session and, for an agent endpoint, to the
// AgentBind of its hostport (claim; "" for none).
func insertTunnel(ctx context.Context, tx store.Tx, accountID string, t *api.Tunnel, claim string) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return err
	}
	refs := []string{t.TunnelSession.ID}
	if claim != "" {
		refs = append(refs, claim)
	}
	return tx.Insert(ctx, &store.Object{Kind: kinds.Tunnel, ID: t.ID, AccountID: accountID, Doc: doc, Refs: refs})
}

// bindDoc is an AgentBind's document: the agent instance whose sessions may bind its
// hostport, and with which proto.
type bindDoc struct {
	Credential string `json:"credential"`
	Instance   string `json:"instance,omitempty"`
	Proto      string `json:"proto"`
}

// claimBind returns the AgentBind of hostport for a's tunnel: a new one when the hostport is
// free, the one a's agent instance holds through its other sessions, else a
// *store.DuplicateError (another agent, another proto, or a second tunnel of this session).
func (a *agentConn) claimBind(ctx context.Context, tx store.Tx, proto, hostport string) (string, error) {
	key := kinds.AgentBindKey(hostport)
	o, err := tx.Lookup(ctx, key)
	if isNotFound(err) {
		doc, err := json.Marshal(bindDoc{Credential: a.credentialID, Instance: a.instance, Proto: proto})
		if err != nil {
			return "", err
		}
		id := ids.New(ids.AgentBind)
		return id, tx.Insert(ctx, &store.Object{Kind: kinds.AgentBind, ID: id, AccountID: a.accountID, Doc: doc, UniqueKeys: []string{key}})
	}
	if err != nil {
		return "", err
	}
	taken := &store.DuplicateError{Key: key, HolderID: o.ID}
	var b bindDoc
	// A tunnel holding the key itself was bound by an older replica: not shared.
	if o.Kind != kinds.AgentBind || json.Unmarshal(o.Doc, &b) != nil || a.instance == "" ||
		b.Instance != a.instance || b.Credential != a.credentialID || b.Proto != proto {
		return "", taken
	}
	siblings, err := tx.Referrers(ctx, o.ID)
	if err != nil {
		return "", err
	}
	for _, t := range siblings {
		if slices.Contains(t.Refs, a.sessionID) {
			return "", taken
		}
	}
	return o.ID, nil
}

// unbind closes one of the session's tunnels.
func (a *agentConn) unbind(m agentproto.Message) error {
	ctx := a.hub.ctx
	err := a.hub.store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.Tunnel, m.TunnelID)
		if err == nil && !slices.Contains(o.Refs, a.sessionID) {
			err = store.ErrNotFound
		}
		if isNotFound(err) {
			return apierr.WithDetail(apierr.BadRequest("ERR_215", "The session has no tunnel %s.", rules.Quote(m.TunnelID)), "param", "tunnel_id")
		}
		if err != nil {
			return err
		}
		return deleteTunnel(ctx, tx, o)
	})
	if err == nil {
		a.hub.tunnels.remove(m.TunnelID)
	}
	return err
}

// checkBind validates the shape of a bind and normalises it: one of hostname (http, https,
// tls), addr (tcp) or labels; endpoint bindings default to ["public"].
func checkBind(m *agentproto.Message) error {
	invalid := func(param, format string, args ...any) error {
		return apierr.WithDetail(apierr.BadRequest("ERR_215", format, args...), "param", param)
	}
	if m.Labels != nil && m.Proto == "" {
		m.Proto = "http"
	}
	if !slices.Contains([]string{"http", "https", "tcp", "tls"}, m.Proto) {
		return invalid("proto", "The proto %s is not one of http, https, tcp, tls.", rules.Quote(m.Proto))
	}
	given := 0
	for _, set := range []bool{m.Hostname != "", m.Addr != "", m.Labels != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return invalid("hostname", "A bind names exactly one of hostname, addr or labels.")
	}
	switch {
	case m.Labels != nil:
		if err := rules.Labels(m.Labels); err != nil {
			return err
		}
		if len(m.Labels) == 0 {
			return invalid("labels", "A labeled tunnel needs at least one label.")
		}
	case m.Proto == "tcp" && m.Addr == "":
		return invalid("addr", "A tcp tunnel binds a reserved address (addr).")
	case m.Proto != "tcp" && m.Hostname == "":
		return invalid("hostname", "A %s tunnel binds a hostname.", m.Proto)
	}
	m.Hostname = rules.NormalizeDomain(m.Hostname)
	if m.Addr != "" {
		host, port, err := net.SplitHostPort(m.Addr)
		if err != nil || host == "" || port == "" {
			return invalid("addr", "The addr %s is not host:port.", rules.Quote(m.Addr))
		}
		m.Addr = strings.ToLower(m.Addr)
	}
	if len(m.Bindings) == 0 {
		m.Bindings = []string{"public"}
	}
	for _, b := range m.Bindings {
		if !slices.Contains(endpointBindings, b) {
			return invalid("bindings", "The binding %s is not one of public, internal, orchestrator.", rules.Quote(b))
		}
	}
	return nil
}

// aclAllows checks a bind against a credential's ACL (details.md §10.2): `*` or no rule
// allows everything; `bind:<domain>` one hostname; `bind:*.<suffix>` every name under the
// suffix, at any depth, and the wildcard name itself; `bind:<host:port>` one address;
// `bind:<key>=<value>`, either side `*`, labels: every label of a labeled tunnel must be
// allowed by some rule.
func aclAllows(acl []string, m agentproto.Message) error {
	if len(acl) == 0 || slices.Contains(acl, "*") {
		return nil
	}
	var what string
	switch {
	case m.Labels != nil:
		keys := make([]string, 0, len(m.Labels))
		for k := range m.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !slices.ContainsFunc(acl, func(rule string) bool { return labelRuleMatches(rule, k, m.Labels[k]) }) {
				return apierr.WithDetail(apierr.BadRequest(bindCodeDenied, "The credential's ACL does not allow binding the label %s.", rules.Quote(k+"="+m.Labels[k])), "param", "labels")
			}
		}
		return nil
	case m.Addr != "":
		if slices.ContainsFunc(acl, func(rule string) bool {
			x, ok := strings.CutPrefix(rule, "bind:")
			return ok && !strings.Contains(x, "=") && strings.EqualFold(x, m.Addr)
		}) {
			return nil
		}
		what = "the address " + m.Addr
	default:
		if slices.ContainsFunc(acl, func(rule string) bool { return domainRuleMatches(rule, m.Hostname) }) {
			return nil
		}
		what = "the hostname " + m.Hostname
	}
	return apierr.WithDetail(apierr.BadRequest(bindCodeDenied, "The credential's ACL does not allow binding %s.", rules.Clip(what)), "param", "acl")
}

func domainRuleMatches(rule, hostname string) bool {
	x, ok := strings.CutPrefix(rule, "bind:")
	if !ok || strings.Contains(x, "=") {
		return false
	}
	x = rules.NormalizeDomain(x)
	if x == hostname {
		return true
	}
	suffix, wild := strings.CutPrefix(x, "*.")
	return wild && strings.HasSuffix(hostname, "."+suffix) && len(hostname) > len(suffix)+1
}

func labelRuleMatches(rule, key, value string) bool {
	x, ok := strings.CutPrefix(rule, "bind:")
	if !ok {
		return false
	}
	k, v, ok := strings.Cut(x, "=")
	return ok && (k == "*" || k == key) && (v == "*" || v == value)
}

// boundOwner returns the reserved domain or address of the account that a bind uses: the
// address itself, the hostname itself, or the nearest wildcard domain above the hostname.
// A name or address of another account is ERR_7118 / ERR_7114, one nobody reserved ERR_7117 /
// ERR_7113.
func (h *Plane) boundOwner(ctx context.Context, tx store.Tx, accountID string, m agentproto.Message) (string, error) {
	if m.Addr != "" {
		o, err := tx.Lookup(ctx, kinds.ReservedAddrKey(m.Addr))
		switch {
		case isNotFound(err):
			return "", apierr.WithDetail(apierr.BadRequest("ERR_7113", "The address %s is not reserved.", rules.Quote(m.Addr)), "param", "addr")
		case err != nil:
			return "", err
		case o.AccountID != accountID:
			return "", apierr.WithDetail(apierr.BadRequest("ERR_7114", "The address %s is reserved by another account.", rules.Quote(m.Addr)), "param", "addr")
		}
		return o.ID, nil
	}
	candidates := []string{m.Hostname}
	for rest := m.Hostname; ; {
		_, after, ok := strings.Cut(rest, ".")
		if !ok || !strings.Contains(after, ".") {
			break
		}
		candidates = append(candidates, "*."+after)
		rest = after
	}
	for _, name := range candidates {
		o, err := tx.Lookup(ctx, kinds.ReservedDomainKey(name))
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if o.AccountID != accountID {
			return "", apierr.WithDetail(apierr.BadRequest("ERR_7118", "The hostname %s is reserved by another account.", rules.Quote(m.Hostname)), "param", "hostname")
		}
		return o.ID, nil
	}
	return "", apierr.WithDetail(apierr.BadRequest("ERR_7117", "The hostname %s is not a reserved domain of the account, nor under one of its wildcard domains.", rules.Quote(m.Hostname)), "param", "hostname")
}

// newEndpoint is the endpoint of a hostname or address tunnel (details.md §7.5).
func newEndpoint(now string, a *agentConn, m agentproto.Message, tunnelID, owner string) *api.Endpoint {
	ep := &api.Endpoint{
		ID: ids.New(ids.Endpoint), CreatedAt: now, UpdatedAt: now, Region: a.region, Proto: m.Proto,
		Type: "agent", Metadata: a.metadata, Tunnel: &api.Ref{ID: tunnelID}, TunnelSession: &api.Ref{ID: a.sessionID},
		UpstreamURL: m.ForwardsTo, Bindings: m.Bindings,
	}
	if m.Addr != "" {
		host, port, _ := net.SplitHostPort(m.Addr)
		ep.Scheme, ep.Host, ep.Hostport = "tcp", host, m.Addr
		ep.Port, _ = strconv.Atoi(port)
		ep.TCPAddr = &api.Ref{ID: owner}
	} else {
		ep.Scheme, ep.Host, ep.Port = "https", m.Hostname, 443
		if m.Proto == "tls" {
			ep.Scheme = "tls"
		}
		ep.Hostport = net.JoinHostPort(m.Hostname, "443")
		ep.Domain = &api.Ref{ID: owner}
	}
	ep.URL = ep.Scheme + "://" + ep.Host
	if m.Addr != "" {
		ep.URL = "tcp://" + m.Addr
	}
	ep.PublicURL = ep.URL
	return ep
}
