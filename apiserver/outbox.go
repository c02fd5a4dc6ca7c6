package apiserver

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Audit events (details.md §9.2, §9.3) are written to the store's outbox by the generic
// create, modify and delete paths of family.go, in the transaction of the change: an
// acknowledged change always has its event, a rolled-back one never does. Each event gets
// a delivery to every destination of the account's subscriptions that name its type, as
// they stand in that transaction; the delivery worker (deliver.go) sends them.

// emit writes the event of op ("created", "updated", "deleted") on obj, a family def
// object rendered as the API returns it, when def's changes are audited.
func (c *call) emit(tx store.Tx, def *api.Family, op string, obj any) error {
	if def.Event == "" {
		return nil
	}
	key := c.ref(c.who.keyID)
	principal := &api.EventPrincipal{ID: c.who.id, Subject: c.who.subject, Source: "API", Credential: &key}
	delivering, err := c.s.addEvent(c.r.Context(), tx, c.who.accountID, def.Event+"_"+op+".v0", principal, obj)
	c.delivering = c.delivering || delivering
	return err
}

// addEvent writes one audit event of the account to the outbox in tx, with a delivery to
// each destination subscribed to its type, and without one when none is: operators read the
// outbox too (GET /_admin/events). delivering says whether it wrote deliveries, so that the
// caller wakes the delivery worker once tx is committed.
func (s *Server) addEvent(ctx context.Context, tx store.Tx, accountID, eventType string, principal *api.EventPrincipal, obj any) (delivering bool, err error) {
	destinations, err := subscribedDestinations(ctx, tx, accountID, eventType)
	if err != nil {
		return false, err
	}
	return s.writeEvent(ctx, tx, accountID, eventType, principal, obj, destinations)
}

// addSessionEvent writes an agent session's event, rendered as GET /tunnel_sessions/{id}
// renders the session, only when a subscription of the account names its type: agents come
// and go far more often than the API's objects change, and an event no destination gets
// would only fill the outbox until retention pruned it. Checked in tx, so the subscribed
// types keep their guarantees (at least once, in order).
func (s *Server) addSessionEvent(ctx context.Context, tx store.Tx, accountID, eventType string, sess api.TunnelSession) (delivering bool, err error) {
	destinations, err := subscribedDestinations(ctx, tx, accountID, eventType)
	if err != nil || len(destinations) == 0 {
		return false, err
	}
	return s.writeEvent(ctx, tx, accountID, eventType, nil, s.renderSession(sess), destinations)
}

// writeEvent writes one event with a delivery to each of destinations.
func (s *Server) writeEvent(ctx context.Context, tx store.Tx, accountID, eventType string, principal *api.EventPrincipal, obj any, destinations []string) (delivering bool, err error) {
	object, err := json.Marshal(obj)
	if err != nil {
		return false, err
	}
	now := s.opts.Now()
	ev := api.Event{
		EventID:        ids.New(ids.Event),
		EventType:      eventType,
		EventTimestamp: api.FormatTime(now),
		AccountID:      accountID,
		Principal:      principal,
		Object:         object,
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, err
	}
	deliveries := make([]store.NewDelivery, len(destinations))
	for i, d := range destinations {
		deliveries[i] = store.NewDelivery{ID: ids.New(ids.EventDelivery), DestinationID: d}
	}
	err = tx.AddEvent(ctx, &store.Event{
		ID: ev.EventID, AccountID: ev.AccountID, Type: ev.EventType, Time: now, Payload: payload,
	}, deliveries)
	return err == nil && len(deliveries) > 0, err
}

// subscribedDestinations returns the destinations of the account's subscriptions that name
// eventType, each once, in the order of the subscriptions and their lists.
func subscribedDestinations(ctx context.Context, tx store.Tx, accountID, eventType string) ([]string, error) {
	subs, err := tx.List(ctx, store.ListQuery{Kind: kinds.EventSubscription, AccountID: accountID})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range slices.Backward(subs) {
		var sub api.EventSubscription
		if err := json.Unmarshal(o.Doc, &sub); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(sub.Sources, func(s api.EventSource) bool { return s.Type == eventType }) {
			continue
		}
		for _, d := range sub.Destinations {
			if !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		}
	}
	return out, nil
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
