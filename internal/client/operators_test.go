package client_test

import (
	"context"
	"slices"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

func TestOrchestratorOperators(t *testing.T) {
	srv := apiservertest.Start(t)
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})
	ctx := context.Background()
	op, err := c.OrchestratorOperators.Create(ctx, api.OrchestratorOperatorCreate{
		EnabledFeatures: []string{"Bindings"},
		Deployment:      &api.OperatorDeploymentInput{Namespace: api.String("ns")},
		Binding:         &api.OperatorBindingInput{EndpointSelectors: []string{"true"}},
	})
	if err != nil || !slices.Equal(op.EnabledFeatures, []string{"bindings"}) || op.Deployment.Namespace != "ns" || op.Binding.Cert.NotAfter != api.ZeroTime {
		t.Fatalf("Create = %+v, %v", op, err)
	}
	// Empty lists clear: the features (and with them the binding).
	op, err = c.OrchestratorOperators.Update(ctx, op.ID, api.OrchestratorOperatorUpdate{EnabledFeatures: []string{}})
	if err != nil || len(op.EnabledFeatures) != 0 || op.Binding.EndpointSelectors != nil {
		t.Fatalf("Update = %+v, %v", op, err)
	}
	if list, err := c.OrchestratorOperators.List(ctx, client.ListOptions{}); err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if eps, err := c.BoundEndpoints(op.ID).List(ctx, client.ListOptions{Limit: 5}); err != nil || len(eps) != 0 {
		t.Fatalf("BoundEndpoints = %v, %v", eps, err)
	}
	if err := c.OrchestratorOperators.Delete(ctx, op.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BoundEndpoints(op.ID).List(ctx, client.ListOptions{}); !client.IsNotFound(err) {
		t.Fatalf("BoundEndpoints of a deleted operator = %v", err)
	}
}
