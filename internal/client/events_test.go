package client_test

import (
	"context"
	"testing"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

func TestEventFamilies(t *testing.T) {
	srv := apiservertest.Start(t)
	c := client.New(client.Config{BaseURL: srv.URL, APIKey: srv.APIKey})
	ctx := context.Background()
	d, err := c.EventDestinations.Create(ctx, api.EventDestinationCreate{Format: api.String("json"), Target: &api.EventTarget{
		Observability: &api.EventTargetObservability{APIKey: "dd-secret", Service: "warren"},
	}})
	if err != nil || d.Format != "json" || d.Target.Observability == nil || d.Target.Observability.APIKey != "" || d.Target.Observability.Service != "warren" {
		t.Fatalf("Create destination = %+v, %v", d, err)
	}
	sub, err := c.EventSubscriptions.Create(ctx, api.EventSubscriptionCreate{
		Sources: []api.EventSourceCreate{{Type: api.String("ip_policy_created.v0")}}, DestinationIDs: []string{d.ID},
	})
	if err != nil || len(sub.Sources) != 1 || len(sub.Destinations) != 1 || sub.Destinations[0].ID != d.ID {
		t.Fatalf("Create subscription = %+v, %v", sub, err)
	}
	if err := c.EventDestinations.Delete(ctx, d.ID); client.IsNotFound(err) || err == nil {
		t.Fatalf("deleting a destination in use = %v", err)
	}
	sources := c.EventSources(sub.ID)
	src, err := sources.Add(ctx, "ip_policy_deleted.v0")
	if err != nil || src.URI != srv.URL+"/event_subscriptions/"+sub.ID+"/sources/ip_policy_deleted.v0" {
		t.Fatalf("Add source = %+v, %v", src, err)
	}
	if list, err := sources.List(ctx); err != nil || len(list.Sources) != 2 {
		t.Fatalf("List sources = %+v, %v", list, err)
	}
	if err := sources.Remove(ctx, "ip_policy_created.v0"); err != nil {
		t.Fatal(err)
	}
	if _, err := sources.Get(ctx, "ip_policy_created.v0"); !client.IsNotFound(err) {
		t.Fatalf("Get removed source = %v", err)
	}
	// An update without lists keeps them; an empty list clears.
	sub, err = c.EventSubscriptions.Update(ctx, sub.ID, api.EventSubscriptionUpdate{Description: api.String("x")})
	if err != nil || len(sub.Sources) != 1 || len(sub.Destinations) != 1 {
		t.Fatalf("Update = %+v, %v", sub, err)
	}
	sub, err = c.EventSubscriptions.Update(ctx, sub.ID, api.EventSubscriptionUpdate{DestinationIDs: []string{}})
	if err != nil || len(sub.Destinations) != 0 {
		t.Fatalf("Update clearing destinations = %+v, %v", sub, err)
	}
	if err := c.EventDestinations.Delete(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	for page, err := range c.EventSubscriptions.Pages(ctx, client.ListOptions{Filter: `obj.description == "x"`}) {
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
	}
	if n != 1 {
		t.Fatalf("filtered list: %d", n)
	}
}
