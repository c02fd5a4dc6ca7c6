package api

import "github.com/warrenhq/terraform-provider-warren/internal/ids"

// Family is one API collection: where it lives, the member its list envelope uses and the
// prefix of its IDs. The server builds its routes from these values and the client its
// collections, so a path is spelled once.
type Family struct {
	// Path is the collection path. A nested family's path starts with its parent's object
	// path, whose ID is the {ParentParam} wildcard: "/edges/https/{edge_id}/routes".
	Path   string
	Member string // the list envelope's member, e.g. "keys"
	Prefix string // ID prefix of its objects
	// Parent is the family whose objects own this family's objects; nil at the top level.
	Parent *Family
	// ParentParam names the path wildcard that holds the parent's ID ("edge_id").
	ParentParam string
	// NoList: the family has no list endpoint of its own (routes are listed in their edge).
	NoList bool
	// Event is the stem of the audit events its changes emit (details.md §9.2): "ip_policy"
	// for ip_policy_created.v0, _updated.v0 and _deleted.v0; "" when they emit none.
	Event string
}

// PathUnder returns the collection path with the parent's ID in place of its wildcard
// (the path itself for top-level families).
func (f *Family) PathUnder(parentID string) string {
	if f.Parent == nil {
		return f.Path
	}
	return f.Parent.Path + "/" + parentID + f.Path[len(f.Parent.Path)+len("/{"+f.ParentParam+"}"):]
}

// nested declares a family under parent: path is the part after the parent's object path.
func nested(parent *Family, param, path, member, prefix string) *Family {
	return &Family{Path: parent.Path + "/{" + param + "}" + path, Member: member, Prefix: prefix, Parent: parent, ParentParam: param}
}

// The families of the API (details.md §6, §11).
var (
	APIKeys                   = &Family{Path: "/api_keys", Member: "keys", Prefix: ids.APIKey, Event: "api_key"}
	Credentials               = &Family{Path: "/credentials", Member: "credentials", Prefix: ids.Credential, Event: "tunnel_credential"}
	SSHCredentials            = &Family{Path: "/ssh_credentials", Member: "ssh_credentials", Prefix: ids.SSHCredential, Event: "ssh_public_key"}
	SSHCertificateAuthorities = &Family{Path: "/ssh_certificate_authorities", Member: "ssh_certificate_authorities", Prefix: ids.SSHCertificateAuthority, Event: "ssh_certificate_authority"}
	ServiceUsers              = &Family{Path: "/service_users", Member: "service_users", Prefix: ids.ServiceUser}
	// BotUsers is the deprecated alias of ServiceUsers: the same objects under another path.
	BotUsers               = &Family{Path: "/bot_users", Member: "bot_users", Prefix: ids.ServiceUser}
	TLSCertificates        = &Family{Path: "/tls_certificates", Member: "tls_certificates", Prefix: ids.TLSCertificate, Event: "tls_certificate"}
	CertificateAuthorities = &Family{Path: "/certificate_authorities", Member: "certificate_authorities", Prefix: ids.CertificateAuthority, Event: "certificate_authority"}
	ReservedDomains        = &Family{Path: "/reserved_domains", Member: "reserved_domains", Prefix: ids.ReservedDomain, Event: "domain"}
	ReservedAddrs          = &Family{Path: "/reserved_addrs", Member: "reserved_addrs", Prefix: ids.ReservedAddr, Event: "tcp_address"}
	IPPolicies             = &Family{Path: "/ip_policies", Member: "ip_policies", Prefix: ids.IPPolicy, Event: "ip_policy"}
	IPPolicyRules          = &Family{Path: "/ip_policy_rules", Member: "ip_policy_rules", Prefix: ids.IPPolicyRule, Event: "ip_policy_rule"}
	IPRestrictions         = &Family{Path: "/ip_restrictions", Member: "ip_restrictions", Prefix: ids.IPRestriction, Event: "ip_restriction"}
	FailoverBackends       = &Family{Path: "/backends/failover", Member: "backends", Prefix: ids.FailoverBackend}
	HTTPResponseBackends   = &Family{Path: "/backends/http_response", Member: "backends", Prefix: ids.HTTPResponseBackend}
	StaticBackends         = &Family{Path: "/backends/static", Member: "backends", Prefix: ids.StaticBackend}
	TunnelGroupBackends    = &Family{Path: "/backends/tunnel_group", Member: "backends", Prefix: ids.TunnelGroupBackend}
	WeightedBackends       = &Family{Path: "/backends/weighted", Member: "backends", Prefix: ids.WeightedBackend}
	HTTPSEdges             = &Family{Path: "/edges/https", Member: "https_edges", Prefix: ids.HTTPSEdge}
	TCPEdges               = &Family{Path: "/edges/tcp", Member: "tcp_edges", Prefix: ids.TCPEdge}
	TLSEdges               = &Family{Path: "/edges/tls", Member: "tls_edges", Prefix: ids.TLSEdge}
	EventDestinations      = &Family{Path: "/event_destinations", Member: "event_destinations", Prefix: ids.EventDestination, Event: "event_destination"}
	EventSubscriptions     = &Family{Path: "/event_subscriptions", Member: "event_subscriptions", Prefix: ids.EventSubscription, Event: "event_subscription"}
	OrchestratorOperators  = &Family{Path: "/orchestrator_operators", Member: "operators", Prefix: ids.OrchestratorOperator}
	// Agents create these three by connecting; the API only reads them (details.md §6.12).
	TunnelSessions = &Family{Path: "/tunnel_sessions", Member: "tunnel_sessions", Prefix: ids.TunnelSession}
	Tunnels        = &Family{Path: "/tunnels", Member: "tunnels", Prefix: ids.Tunnel}
	Endpoints      = &Family{Path: "/endpoints", Member: "endpoints", Prefix: ids.Endpoint}
	// HTTPSEdgeRoutes are listed only inside their edge's routes member.
	HTTPSEdgeRoutes = func() *Family {
		f := nested(HTTPSEdges, "edge_id", "/routes", "routes", ids.HTTPSEdgeRoute)
		f.NoList = true
		return f
	}()
)

// Families lists every family, in the order the server registers them.
var Families = []*Family{
	APIKeys, Credentials, SSHCredentials, SSHCertificateAuthorities, ServiceUsers, BotUsers,
	TLSCertificates, CertificateAuthorities, ReservedDomains, ReservedAddrs,
	IPPolicies, IPPolicyRules, IPRestrictions,
	FailoverBackends, HTTPResponseBackends, StaticBackends, TunnelGroupBackends, WeightedBackends,
	HTTPSEdges, TCPEdges, TLSEdges, HTTPSEdgeRoutes,
	EventDestinations, EventSubscriptions, OrchestratorOperators,
	TunnelSessions, Tunnels, Endpoints,
}
