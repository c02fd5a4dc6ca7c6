package client_test

import (
	"context"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

func TestEdgesRoutesAndModules(t *testing.T) {
	srv := apiservertest.Start(t)
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})
	ctx := context.Background()
	if _, err := c.ReservedDomains.Create(ctx, api.ReservedDomainCreate{Domain: api.String("app.example.com")}); err != nil {
		t.Fatal(err)
	}
	backend, err := c.StaticBackends.Create(ctx, api.StaticBackendCreate{Address: api.String("10.0.0.1:80")})
	if err != nil {
		t.Fatal(err)
	}
	edge, err := c.HTTPSEdges.Create(ctx, api.HTTPSEdgeCreate{Hostports: []string{"app.example.com:443"}})
	if err != nil || edge.URI != srv.URL+"/edges/https/"+edge.ID || len(edge.Routes) != 0 {
		t.Fatalf("Create HTTPS edge = %+v, %v", edge, err)
	}
	routes := c.HTTPSEdgeRoutes.Under(edge.ID)
	route, err := routes.Create(ctx, api.HTTPSEdgeRouteCreate{
		MatchType: api.String("path_prefix"), Match: api.String("/"),
		Backend: &api.BackendModuleRequest{BackendID: &backend.ID},
	})
	if err != nil || route.EdgeID != edge.ID || route.Backend == nil || route.Backend.Backend.ID != backend.ID {
		t.Fatalf("Create route = %+v, %v", route, err)
	}
	if route.URI != srv.URL+"/edges/https/"+edge.ID+"/routes/"+route.ID {
		t.Errorf("route uri = %s", route.URI)
	}
	if got, err := c.HTTPSEdges.Get(ctx, edge.ID); err != nil || len(got.Routes) != 1 || got.Routes[0].ID != route.ID {
		t.Fatalf("edge routes = %+v, %v", got, err)
	}

	// Modules: PUT, GET, DELETE; a module not configured is a 404.
	var cb api.CircuitBreakerModule
	if err := routes.GetModule(ctx, route.ID, "circuit_breaker", &cb); !client.IsNotFound(err) {
		t.Fatalf("GET unconfigured module = %v", err)
	}
	if err := routes.PutModule(ctx, route.ID, "circuit_breaker", api.CircuitBreakerModuleRequest{ErrorThresholdPercentage: api.Float64(0.25)}, &cb); err != nil || !cb.Enabled || cb.ErrorThresholdPercentage != 0.25 {
		t.Fatalf("PUT module = %+v, %v", cb, err)
	}
	cb = api.CircuitBreakerModule{}
	if err := routes.GetModule(ctx, route.ID, "circuit_breaker", &cb); err != nil || cb.ErrorThresholdPercentage != 0.25 {
		t.Fatalf("GET module = %+v, %v", cb, err)
	}
	if err := routes.DeleteModule(ctx, route.ID, "circuit_breaker"); err != nil {
		t.Fatal(err)
	}
	if err := routes.DeleteModule(ctx, route.ID, "circuit_breaker"); !client.IsNotFound(err) {
		t.Fatalf("DELETE unconfigured module = %v", err)
	}

	tcp, err := c.TCPEdges.Create(ctx, api.TCPEdgeCreate{})
	if err != nil || tcp.Hostports != nil || tcp.Backend != nil {
		t.Fatalf("Create TCP edge = %+v, %v", tcp, err)
	}
	var bm api.BackendModule
	if err := c.TCPEdges.PutModule(ctx, tcp.ID, "backend", api.BackendModuleRequest{BackendID: &backend.ID}, &bm); err != nil || bm.Backend.URI != backend.URI {
		t.Fatalf("PUT backend = %+v, %v", bm, err)
	}
	tls, err := c.TLSEdges.Create(ctx, api.TLSEdgeCreate{TLSTermination: &api.TLSTerminationModuleRequest{TerminateAt: api.String("upstream")}})
	if err != nil || tls.TLSTermination == nil || tls.TLSTermination.TerminateAt != "upstream" {
		t.Fatalf("Create TLS edge = %+v, %v", tls, err)
	}
	if list, err := c.TLSEdges.List(ctx, client.ListOptions{}); err != nil || len(list) != 1 {
		t.Fatalf("List TLS edges = %d, %v", len(list), err)
	}

	// Deleting the edge deletes its routes.
	if err := c.HTTPSEdges.Delete(ctx, edge.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := routes.Get(ctx, route.ID); !client.IsNotFound(err) {
		t.Fatalf("route after its edge = %v", err)
	}
}
