package api

// Edges and HTTPS edge routes (details.md §6.10, §6.11, §7.3, §7.4). Module members are null
// until configured. A PATCH takes the create members; a module given in a PATCH replaces the
// whole stored module, and modules are removed only with DELETE <owner>/<module>.

// HTTPSEdge serves HTTPS on reserved domains; its routes pick the modules per path.
type HTTPSEdge struct {
	Meta
	Description    string                `json:"description,omitempty"`
	Metadata       string                `json:"metadata,omitempty"`
	Hostports      []string              `json:"hostports"`
	MutualTLS      *MutualTLSModule      `json:"mutual_tls"`
	TLSTermination *TLSTerminationModule `json:"tls_termination"`
	Routes         []HTTPSEdgeRoute      `json:"routes"`
}

// HTTPSEdgeCreate is the body of POST /edges/https and PATCH /edges/https/{id}.
type HTTPSEdgeCreate struct {
	ID             *string                      `json:"id,omitempty"`
	Description    *string                      `json:"description,omitempty"`
	Metadata       *string                      `json:"metadata,omitempty"`
	Hostports      []string                     `json:"hostports"`
	MutualTLS      *MutualTLSModuleRequest      `json:"mutual_tls,omitempty"`
	TLSTermination *TLSTerminationModuleRequest `json:"tls_termination,omitempty"`
}

// TCPEdge serves TCP on reserved addresses.
type TCPEdge struct {
	Meta
	Description   string               `json:"description,omitempty"`
	Metadata      string               `json:"metadata,omitempty"`
	Hostports     []string             `json:"hostports"`
	Backend       *BackendModule       `json:"backend"`
	IPRestriction *IPRestrictionModule `json:"ip_restriction"`
	TrafficPolicy *TrafficPolicyModule `json:"traffic_policy"`
	Policy        *struct{}            `json:"policy"` // legacy, always null
}

// TCPEdgeCreate is the body of POST /edges/tcp and PATCH /edges/tcp/{id}.
type TCPEdgeCreate struct {
	ID            *string                     `json:"id,omitempty"`
	Description   *string                     `json:"description,omitempty"`
	Metadata      *string                     `json:"metadata,omitempty"`
	Hostports     []string                    `json:"hostports"`
	Backend       *BackendModuleRequest       `json:"backend,omitempty"`
	IPRestriction *IPRestrictionModuleRequest `json:"ip_restriction,omitempty"`
	TrafficPolicy *TrafficPolicyModuleRequest `json:"traffic_policy,omitempty"`
}

// TLSEdge serves TLS on reserved domains, terminating it at the edge or passing it upstream.
type TLSEdge struct {
	Meta
	Description    string                `json:"description,omitempty"`
	Metadata       string                `json:"metadata,omitempty"`
	Hostports      []string              `json:"hostports"`
	Backend        *BackendModule        `json:"backend"`
	IPRestriction  *IPRestrictionModule  `json:"ip_restriction"`
	MutualTLS      *MutualTLSModule      `json:"mutual_tls"`
	TLSTermination *TLSTerminationModule `json:"tls_termination"`
	TrafficPolicy  *TrafficPolicyModule  `json:"traffic_policy"`
	Policy         *struct{}             `json:"policy"` // legacy, always null
}

// TLSEdgeCreate is the body of POST /edges/tls and PATCH /edges/tls/{id}.
type TLSEdgeCreate struct {
	ID             *string                      `json:"id,omitempty"`
	Description    *string                      `json:"description,omitempty"`
	Metadata       *string                      `json:"metadata,omitempty"`
	Hostports      []string                     `json:"hostports"`
	Backend        *BackendModuleRequest        `json:"backend,omitempty"`
	IPRestriction  *IPRestrictionModuleRequest  `json:"ip_restriction,omitempty"`
	MutualTLS      *MutualTLSModuleRequest      `json:"mutual_tls,omitempty"`
	TLSTermination *TLSTerminationModuleRequest `json:"tls_termination,omitempty"`
	TrafficPolicy  *TrafficPolicyModuleRequest  `json:"traffic_policy,omitempty"`
}

// HTTPSEdgeRoute sends the requests of an HTTPS edge that match a path through its modules.
type HTTPSEdgeRoute struct {
	Meta
	EdgeID                string                     `json:"edge_id"`
	Description           string                     `json:"description,omitempty"`
	Metadata              string                     `json:"metadata,omitempty"`
	MatchType             string                     `json:"match_type" enum:"match_type"` // exact_path or path_prefix
	Match                 string                     `json:"match"`
	Backend               *BackendModule             `json:"backend"`
	IPRestriction         *IPRestrictionModule       `json:"ip_restriction"`
	CircuitBreaker        *CircuitBreakerModule      `json:"circuit_breaker"`
	Compression           *ToggleModule              `json:"compression"`
	RequestHeaders        *HeadersModule             `json:"request_headers"`
	ResponseHeaders       *HeadersModule             `json:"response_headers"`
	WebhookVerification   *WebhookVerificationModule `json:"webhook_verification"`
	OAuth                 *OAuthModule               `json:"oauth"`
	SAML                  *SAMLModule                `json:"saml"`
	OIDC                  *OIDCModule                `json:"oidc"`
	WebsocketTCPConverter *ToggleModule              `json:"websocket_tcp_converter"`
	UserAgentFilter       *UserAgentFilterModule     `json:"user_agent_filter"`
	TrafficPolicy         *TrafficPolicyModule       `json:"traffic_policy"`
	Policy                *struct{}                  `json:"policy"` // legacy, always null
}

// HTTPSEdgeRouteCreate is the body of POST /edges/https/{edge_id}/routes and of PATCH
// /edges/https/{edge_id}/routes/{id}. An edge_id that is not the path's is ERR_7110.
type HTTPSEdgeRouteCreate struct {
	ID                    *string                           `json:"id,omitempty"`
	EdgeID                *string                           `json:"edge_id,omitempty"`
	Description           *string                           `json:"description,omitempty"`
	Metadata              *string                           `json:"metadata,omitempty"`
	MatchType             *string                           `json:"match_type,omitempty" enum:"match_type" required:"create"`
	Match                 *string                           `json:"match,omitempty" required:"create"`
	Backend               *BackendModuleRequest             `json:"backend,omitempty"`
	IPRestriction         *IPRestrictionModuleRequest       `json:"ip_restriction,omitempty"`
	CircuitBreaker        *CircuitBreakerModuleRequest      `json:"circuit_breaker,omitempty"`
	Compression           *ToggleModuleRequest              `json:"compression,omitempty"`
	RequestHeaders        *HeadersModuleRequest             `json:"request_headers,omitempty"`
	ResponseHeaders       *HeadersModuleRequest             `json:"response_headers,omitempty"`
	WebhookVerification   *WebhookVerificationModuleRequest `json:"webhook_verification,omitempty"`
	OAuth                 *OAuthModuleRequest               `json:"oauth,omitempty"`
	SAML                  *SAMLModuleRequest                `json:"saml,omitempty"`
	OIDC                  *OIDCModuleRequest                `json:"oidc,omitempty"`
	WebsocketTCPConverter *ToggleModuleRequest              `json:"websocket_tcp_converter,omitempty"`
	UserAgentFilter       *UserAgentFilterModuleRequest     `json:"user_agent_filter,omitempty"`
	TrafficPolicy         *TrafficPolicyModuleRequest       `json:"traffic_policy,omitempty"`
}
