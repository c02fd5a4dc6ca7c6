package api

// The five backend kinds (details.md §6.9, §7.9). Every list is under the member "backends".

// FailoverBackend sends traffic to the first of its backends that is up.
type FailoverBackend struct {
	Meta
	Description string   `json:"description,omitempty"`
	Metadata    string   `json:"metadata,omitempty"`
	Backends    []string `json:"backends"`
}

// FailoverBackendCreate is the body of POST /backends/failover; PATCH takes the same members
// (a nil Backends keeps the stored list, an empty one clears it).
type FailoverBackendCreate struct {
	ID          *string  `json:"id,omitempty"`
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	Backends    []string `json:"backends"`
}

// HTTPResponseBackend answers every request itself with a fixed response.
type HTTPResponseBackend struct {
	Meta
	Description string            `json:"description,omitempty"`
	Metadata    string            `json:"metadata,omitempty"`
	Body        string            `json:"body"`
	Headers     map[string]string `json:"headers"`
	StatusCode  int64             `json:"status_code"`
}

// HTTPResponseBackendCreate is the body of POST and PATCH /backends/http_response.
type HTTPResponseBackendCreate struct {
	ID          *string           `json:"id,omitempty"`
	Description *string           `json:"description,omitempty"`
	Metadata    *string           `json:"metadata,omitempty"`
	Body        *string           `json:"body,omitempty"`
	Headers     map[string]string `json:"headers"`
	StatusCode  *int64            `json:"status_code,omitempty"`
}

// StaticBackend forwards traffic to a fixed address.
type StaticBackend struct {
	Meta
	Description string    `json:"description,omitempty"`
	Metadata    string    `json:"metadata,omitempty"`
	Address     string    `json:"address"`
	TLS         StaticTLS `json:"tls"`
}

// StaticTLS says whether the static backend is reached over TLS.
type StaticTLS struct {
	Enabled bool `json:"enabled"`
}

// StaticBackendCreate is the body of POST and PATCH /backends/static.
type StaticBackendCreate struct {
	ID          *string    `json:"id,omitempty"`
	Description *string    `json:"description,omitempty"`
	Metadata    *string    `json:"metadata,omitempty"`
	Address     *string    `json:"address,omitempty" required:"create"`
	TLS         *StaticTLS `json:"tls,omitempty"`
}

// TunnelGroupBackend balances traffic over the tunnels whose labels match.
type TunnelGroupBackend struct {
	Meta
	Description string            `json:"description,omitempty"`
	Metadata    string            `json:"metadata,omitempty"`
	Labels      map[string]string `json:"labels"`
	Tunnels     []Ref             `json:"tunnels"`
}

// TunnelGroupBackendCreate is the body of POST and PATCH /backends/tunnel_group.
type TunnelGroupBackendCreate struct {
	ID          *string           `json:"id,omitempty"`
	Description *string           `json:"description,omitempty"`
	Metadata    *string           `json:"metadata,omitempty"`
	Labels      map[string]string `json:"labels"`
}

// WeightedBackend splits traffic over its backends by weight.
type WeightedBackend struct {
	Meta
	Description string           `json:"description,omitempty"`
	Metadata    string           `json:"metadata,omitempty"`
	Backends    map[string]int64 `json:"backends"`
}

// WeightedBackendCreate is the body of POST and PATCH /backends/weighted.
type WeightedBackendCreate struct {
	ID          *string          `json:"id,omitempty"`
	Description *string          `json:"description,omitempty"`
	Metadata    *string          `json:"metadata,omitempty"`
	Backends    map[string]int64 `json:"backends"`
}
