package provider

import (
	"testing"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// Each family's API type finds its own collection of the client, views included.
func TestCollectionOf(t *testing.T) {
	c := client.New(client.Config{BaseURL: "http://127.0.0.1:1"})
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"api keys", collectionOf[api.APIKey](c), c.APIKeys},
		{"failover backends", collectionOf[api.FailoverBackend](c), c.FailoverBackends},
		{"weighted backends", collectionOf[api.WeightedBackend](c), c.WeightedBackends},
		{"TLS edges", collectionOf[api.TLSEdge](c), c.TLSEdges},
		{"TCP edges", collectionOf[api.TCPEdge](c), c.TCPEdges},
		{"operators", collectionOf[api.OrchestratorOperator](c), c.OrchestratorOperators},
		{"tunnel sessions", collectionOf[api.TunnelSession](c), c.TunnelSessions},
		{"tunnels", collectionOf[api.Tunnel](c), c.Tunnels},
		{"endpoints", collectionOf[api.Endpoint](c), c.Endpoints},
		{"api keys again (cached)", collectionOf[api.APIKey](c), c.APIKeys},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: got %T %p, want %p", tt.name, tt.got, tt.got, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a type without a collection")
		}
	}()
	collectionOf[api.HTTPSEdgeRoute](c) // under an edge: no collection of its own
}
