// Package kinds is the one table of what the API server keeps in the store: the kind of each
// family's objects, how each unique key is spelled, and the shape of each secret column.
// Every package that reads or writes those objects spells them from here, so a kind or a key
// renamed in one place cannot drift from its readers.
package kinds

import (
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// The store kinds (store.Object.Kind).
const (
	// The API's families.
	Account              = "account"
	User                 = "user"
	ServiceUser          = "service_user"
	APIKey               = "api_key"
	Credential           = "credential"
	SSHCredential        = "ssh_credential"
	SSHCA                = "ssh_certificate_authority"
	CertificateAuthority = "certificate_authority"
	TLSCertificate       = "tls_certificate"
	ReservedDomain       = "reserved_domain"
	ReservedAddr         = "reserved_addr"
	IPPolicy             = "ip_policy"
	IPPolicyRule         = "ip_policy_rule"
	IPRestriction        = "ip_restriction"
	HTTPSEdge            = "https_edge"
	TCPEdge              = "tcp_edge"
	TLSEdge              = "tls_edge"
	HTTPSEdgeRoute       = "https_edge_route"
	TunnelGroupBackend   = "backend_tunnel_group"
	WeightedBackend      = "backend_weighted"
	FailoverBackend      = "backend_failover"
	StaticBackend        = "backend_static"
	HTTPResponseBackend  = "backend_http_response"
	EventDestination     = "event_destination"
	EventSubscription    = "event_subscription"
	OrchestratorOperator = "orchestrator_operator"

	// OperatorCA is an account's operator CA: its certificate in the document, its
	// private key in the secret column. One per account (a unique key), made on first use.
	OperatorCA = "operator_ca"
	// IdempotencyKey is the record of a POST's Idempotency-Key and its answer.
	IdempotencyKey = "idempotency_key"

	// The agent plane: the sessions of connected agents, their tunnels and endpoints, the
	// commands sent to them, and each replica's lease.
	TunnelSession = "tunnel_session"
	Tunnel        = "tunnel"
	Endpoint      = "endpoint"
	AgentCommand  = "agent_command"
	AgentReplica  = "agent_replica"
	// AgentBind is a hostport bound by one agent instance (AgentBindKey), held for as long
	// as a tunnel of one of its sessions refers to it: an instance with sessions on several
	// replicas binds the hostport on each.
	AgentBind = "agent_bind"

	// The ACME client's storage, server-wide (no account): each item (an ACME account, a
	// certificate, its key, its metadata) with its value in the sealed secret column, and
	// the locks that keep replicas from ordering a certificate twice.
	ACMEItem = "acme_item"
	ACMELock = "acme_lock"
	// ACMEChallengeRecord holds the TXT values of one name of the zone of the ACME challenge
	// targets (acme-challenge.<domain base>), server-wide: what every replica's DNS server
	// answers while a DNS-01 validation is under way.
	ACMEChallengeRecord = "acme_challenge_record"

	// TrafficMinute is one replica's traffic of one edge (its parent) or route in one minute,
	// which GET <edge>/{id}/traffic sums over the replicas.
	TrafficMinute = "traffic_minute"
)

// Routing are the kinds the traffic plane's routing snapshot is compiled from: a write of
// one of them moves the routing revision (store.Routing). Tunnels, endpoints and sessions are
// not among them: the edge asks the agent plane for those, live. Accounts are, for their
// disabled flag (written only when created, disabled or enabled).
var Routing = map[string]bool{
	Account:   true,
	HTTPSEdge: true, HTTPSEdgeRoute: true, TCPEdge: true, TLSEdge: true,
	FailoverBackend: true, WeightedBackend: true, HTTPResponseBackend: true, StaticBackend: true, TunnelGroupBackend: true,
	ReservedDomain: true, ReservedAddr: true, TLSCertificate: true, CertificateAuthority: true,
	IPPolicy: true, IPPolicyRule: true, IPRestriction: true,
}

// The unique keys (store.Object.UniqueKeys). A key scoped to an account embeds its ID.

// UserEmailKey: a user's email, per account and case-insensitive.
func UserEmailKey(accountID, email string) string {
	return "user.email:" + accountID + ":" + strings.ToLower(email)
}

// ServiceUserNameKey: a service user's name, per account.
func ServiceUserNameKey(accountID, name string) string {
	return "service_user.name:" + accountID + ":" + name
}

// SSHPublicKeyKey: an SSH credential's public key, by its fingerprint, across accounts.
func SSHPublicKeyKey(fingerprint string) string { return "ssh_public_key:" + fingerprint }

// ReservedDomainKey: a reserved domain's name, across accounts.
func ReservedDomainKey(domain string) string { return "reserved_domain:" + domain }

// ReservedAddrKey: a reserved address (host:port), across accounts.
func ReservedAddrKey(addr string) string { return "reserved_addr:" + addr }

// IPPolicyRuleKey: a rule's CIDR, per policy.
func IPPolicyRuleKey(policyID, cidr string) string {
	return "ip_policy_rule.cidr:" + policyID + ":" + cidr
}

// IPRestrictionKey: an IP restriction's type, per account (one restriction of each type).
func IPRestrictionKey(accountID, restrictionType string) string {
	k := IPRestrictionAccountKey(restrictionType)
	return k.Prefix + accountID + k.Suffix
}

// IPRestrictionAccountKey is IPRestrictionKey for store.Tx.GetWith, which finds the
// restriction beside the object it gets.
func IPRestrictionAccountKey(restrictionType string) store.AccountKey {
	return store.AccountKey{Prefix: "ip_restriction.type:", Suffix: ":" + restrictionType}
}

// EdgeHostportKey: a hostport an edge serves, across accounts (one edge a hostport).
func EdgeHostportKey(hostport string) string { return edgeHostportPrefix + hostport }

const edgeHostportPrefix = "edge.hostport:"

// EdgeHostportOf is the hostport of an EdgeHostportKey.
func EdgeHostportOf(key string) string { return strings.TrimPrefix(key, edgeHostportPrefix) }

// RouteMatchKey: a route's match, per HTTPS edge.
func RouteMatchKey(edgeID, match string) string { return "route.match:" + edgeID + ":" + match }

// OperatorCAKey: the operator CA of an account, one per account.
func OperatorCAKey(accountID string) string { return "operator_ca:" + accountID }

// IdempotencyKeyKey: an Idempotency-Key, per account.
func IdempotencyKeyKey(accountID, key string) string {
	return "idempotency_key:" + accountID + ":" + key
}

// AgentBindKey: a hostport an agent's tunnels are bound to, across accounts (one AgentBind
// a hostport, so one agent instance).
func AgentBindKey(hostport string) string { return "agent_bind:" + hostport }
