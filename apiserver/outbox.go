package apiserver

import (
	"encoding/json"
	"slices"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Audit events (details.md §9.2, §9.3) are written to the outbox (package events) by the
// generic create, modify and delete paths of family.go, in the transaction of the change.

// emit writes the event of op ("created", "updated", "deleted") on obj, a family def
// object rendered as the API returns it, when def's changes are audited.
func (c *call) emit(tx store.Tx, def *api.Family, op string, obj any) error {
	if def.Event == "" {
		return nil
	}
	key := c.ref(c.who.keyID)
	principal := &api.EventPrincipal{ID: c.who.id, Subject: c.who.subject, Source: "API", Credential: &key}
	return c.s.events.Add(c.r.Context(), tx, c.who.accountID, def.Event+"_"+op+".v0", principal, obj)
}

// adminEvents serves GET /_admin/events: the outbox's events, newest first, each as it is
// delivered; account_id narrows them to one account.
func (s *Server) adminEvents(c *call) error {
	q, err := c.parseListQuery(ids.Event, nil, "account_id")
	if err != nil {
		return err
	}
	evs, err := s.opts.Store.Events(c.r.Context(), store.OutboxQuery{AccountID: q.extra.Get("account_id"), BeforeID: q.beforeID, Limit: q.limit + 1})
	if err != nil {
		return err
	}
	evs, more := lookAhead(evs, q.limit)
	items := make([]json.RawMessage, len(evs))
	lastID := ""
	for i, e := range evs {
		items[i], lastID = e.Payload, e.ID
	}
	return c.writeList("/_admin/events", "events", q, items, lastID, more)
}

// adminDeliveries serves GET /_admin/deliveries: every delivery attempt's state, newest
// first, narrowed by account_id, destination_id, event_id and state.
func (s *Server) adminDeliveries(c *call) error {
	q, err := c.parseListQuery(ids.EventDelivery, nil, "account_id", "destination_id", "event_id", "state")
	if err != nil {
		return err
	}
	if state := q.extra.Get("state"); state != "" && !slices.Contains([]string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed}, state) {
		return apierr.WithDetail(apierr.BadRequest("ERR_215", "Invalid state %q; one of pending, delivered, failed.", state), "param", "state")
	}
	ds, err := s.opts.Store.Deliveries(c.r.Context(), store.OutboxQuery{
		AccountID: q.extra.Get("account_id"), DestinationID: q.extra.Get("destination_id"),
		EventID: q.extra.Get("event_id"), State: q.extra.Get("state"), BeforeID: q.beforeID, Limit: q.limit + 1,
	})
	if err != nil {
		return err
	}
	ds, more := lookAhead(ds, q.limit)
	items := make([]json.RawMessage, len(ds))
	lastID := ""
	for i, d := range ds {
		out := api.AdminDelivery{
			ID: d.ID, EventID: d.EventID, DestinationID: d.DestinationID, AccountID: d.AccountID,
			State: d.State, Attempts: d.Attempts, LastError: d.LastError,
			CreatedAt: api.FormatTime(d.CreatedAt), UpdatedAt: api.FormatTime(d.UpdatedAt),
		}
		if d.State == store.DeliveryPending {
			next := api.FormatTime(d.NextAttempt)
			out.NextAttemptAt = &next
		}
		if items[i], err = encodeJSON(out); err != nil {
			return err
		}
		lastID = d.ID
	}
	return c.writeList("/_admin/deliveries", "deliveries", q, items, lastID, more)
}

// lookAhead cuts a list read with one item more than the page to the page, and says whether
// another page follows.
func lookAhead[T any](items []T, limit int) ([]T, bool) {
	return items[:min(len(items), limit)], len(items) > limit
}
