package api

// Objects that agents create by connecting (details.md §6.12, §7.5, §7.6): read-only in the
// API.

// TunnelSession is one connected agent (/tunnel_sessions).
type TunnelSession struct {
	ID           string `json:"id"`
	URI          string `json:"uri"`
	AgentVersion string `json:"agent_version"`
	Credential   Ref    `json:"credential"`
	IP           string `json:"ip"`
	Metadata     string `json:"metadata,omitempty"`
	OS           string `json:"os"`
	Region       string `json:"region" enum:"region"`
	StartedAt    string `json:"started_at"`
	Transport    string `json:"transport"`
}

// Tunnel is one tunnel of a session (/tunnels); tunnels have no uri.
type Tunnel struct {
	ID            string            `json:"id"`
	PublicURL     string            `json:"public_url,omitempty"`
	StartedAt     string            `json:"started_at"`
	Region        string            `json:"region"`
	Metadata      string            `json:"metadata,omitempty"`
	ForwardsTo    string            `json:"forwards_to"`
	Proto         string            `json:"proto"`
	TunnelSession Ref               `json:"tunnel_session"`
	Endpoint      *Ref              `json:"endpoint"`
	Labels        map[string]string `json:"labels,omitempty"`
	Backends      []Ref             `json:"backends"`
}

// Endpoint is where a tunnel is reachable (details.md §7.5).
type Endpoint struct {
	ID               string   `json:"id"`
	URI              string   `json:"uri"`
	CreatedAt        string   `json:"created_at"`
	UpdatedAt        string   `json:"updated_at"`
	Region           string   `json:"region"`
	URL              string   `json:"url"`
	PublicURL        string   `json:"public_url"`
	Proto            string   `json:"proto"`
	Scheme           string   `json:"scheme"`
	Host             string   `json:"host"`
	Hostport         string   `json:"hostport"`
	Port             int      `json:"port"`
	Type             string   `json:"type"`
	Metadata         string   `json:"metadata"`
	Description      string   `json:"description"`
	Name             string   `json:"name"`
	Domain           *Ref     `json:"domain"`
	TCPAddr          *Ref     `json:"tcp_addr"`
	Tunnel           *Ref     `json:"tunnel"`
	Edge             *Ref     `json:"edge"`
	Principal        *Ref     `json:"principal"`
	TunnelSession    *Ref     `json:"tunnel_session"`
	UpstreamURL      string   `json:"upstream_url"`
	UpstreamProtocol string   `json:"upstream_protocol"`
	TrafficPolicy    string   `json:"traffic_policy"`
	Bindings         []string `json:"bindings"`
	PoolingEnabled   bool     `json:"pooling_enabled"`
}
