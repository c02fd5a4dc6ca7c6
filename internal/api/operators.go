package api

// OrchestratorOperator is an orchestrator operator (/orchestrator_operators, details.md
// §6.14, §7.2): an operator running in a cluster that the account registers, optionally with a
// client certificate for endpoint bindings.
type OrchestratorOperator struct {
	Meta
	UpdatedAt       string             `json:"updated_at"`
	Description     string             `json:"description,omitempty"`
	Metadata        string             `json:"metadata,omitempty"`
	Principal       Ref                `json:"principal"`
	EnabledFeatures []string           `json:"enabled_features" enum:"operator_feature"` // lowercased; a request takes any case
	Region          string             `json:"region" enum:"operator_region"`
	Deployment      OperatorDeployment `json:"deployment"`
	Binding         OperatorBinding    `json:"binding"`
}

// OperatorDeployment says where the operator runs; every member is "" when unset.
type OperatorDeployment struct {
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	Version     string `json:"version"`
	ClusterName string `json:"cluster_name"`
}

// OperatorBinding is always present, even with the bindings feature off (details.md §7.2).
type OperatorBinding struct {
	EndpointSelectors []string     `json:"endpoint_selectors"` // null when none
	Cert              OperatorCert `json:"cert"`
	IngressEndpoint   string       `json:"ingress_endpoint"`
}

// OperatorCert is the client certificate issued from the binding's CSR: Cert "" and both
// times ZeroTime while none was issued.
type OperatorCert struct {
	Cert      string `json:"cert"`
	NotBefore string `json:"not_before"`
	NotAfter  string `json:"not_after"`
}

// ZeroTime is how the API writes a time that is not set (Go's zero time, details.md §7.2).
const ZeroTime = "0001-01-01T00:00:00Z"

// OrchestratorOperatorCreate is the body of POST /orchestrator_operators.
type OrchestratorOperatorCreate struct {
	Description     *string                  `json:"description,omitempty"`
	Metadata        *string                  `json:"metadata,omitempty"`
	EnabledFeatures []string                 `json:"enabled_features,omitempty"`
	Region          *string                  `json:"region,omitempty" enum:"operator_region"`
	Deployment      *OperatorDeploymentInput `json:"deployment,omitempty"`
	Binding         *OperatorBindingInput    `json:"binding,omitempty"`
}

// OrchestratorOperatorUpdate is the body of PATCH /orchestrator_operators/{id}. A given
// enabled_features replaces the list; deployment namespace and cluster_name may be sent only
// with their current values.
type OrchestratorOperatorUpdate struct {
	Description     *string                  `json:"description,omitempty"`
	Metadata        *string                  `json:"metadata,omitempty"`
	EnabledFeatures []string                 `json:"enabled_features"` // [] clears, null keeps
	Region          *string                  `json:"region,omitempty" enum:"operator_region"`
	Deployment      *OperatorDeploymentInput `json:"deployment,omitempty"`
	Binding         *OperatorBindingInput    `json:"binding,omitempty"`
}

// OperatorDeploymentInput is the deployment of a request; nil members are not given.
type OperatorDeploymentInput struct {
	Name        *string `json:"name,omitempty"`
	Namespace   *string `json:"namespace,omitempty"`
	Version     *string `json:"version,omitempty"`
	ClusterName *string `json:"cluster_name,omitempty"`
}

// OperatorBindingInput is the binding of a request. EndpointSelectors replaces the stored
// list when given ([] clears it); a CSR has a new certificate issued.
type OperatorBindingInput struct {
	EndpointSelectors []string `json:"endpoint_selectors"` // [] clears, null keeps
	CSR               *string  `json:"csr,omitempty"`
	IngressEndpoint   *string  `json:"ingress_endpoint,omitempty"`
}
