// Package events is Warren's event outbox: audit and agent session events are written to
// the store's outbox in the transaction of the change they record, with a delivery to each
// destination subscribed to their type, and a worker in every replica sends those deliveries
// (details.md §9.2, §9.3). An acknowledged change always has its event, a rolled-back one
// never does. The API families that configure destinations and subscriptions, and the
// operators' view of the outbox, are the API server's.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/aftercommit"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Outbox writes events and, once started, runs the worker that delivers them until Close.
type Outbox struct {
	opts Options
	env  Env
	// worker is nil when this process delivers no events (other replicas do).
	worker *worker
}

// Env is what the outbox needs of the server that runs it.
type Env struct {
	// Store is the server's store. Events are written in its writes, which must run
	// after-commit callbacks (aftercommit.Store): the worker is woken by one.
	Store store.Store
	Now   func() time.Time
	Log   *zap.Logger
	// LogStoreError logs a store call that failed (the server logs an outage once).
	LogStoreError func(log *zap.Logger, msg string, err error, fields ...zap.Field)
	// Delivered counts the events of one delivery attempt to a target kind, by outcome
	// (OutcomeDelivered, OutcomeRetried, OutcomeFailed).
	Delivered func(target, outcome string, events int)
}

// New returns the outbox of a server; opts must have passed Check and SetDefaults.
func New(opts Options, env Env) *Outbox { return &Outbox{opts: opts, env: env} }

// Start starts the worker, unless opts.Workers is negative: then this process delivers no
// events, and other replicas do.
func (o *Outbox) Start() {
	if o.opts.Workers > 0 {
		host, _ := os.Hostname()
		o.worker = startWorker(o, fmt.Sprintf("%s/%d/%s", host, os.Getpid(), ids.New("")))
	}
}

// Close stops the worker and waits for the sends under way to end.
func (o *Outbox) Close() {
	if o.worker != nil {
		o.worker.close()
	}
}

// Wake tells the worker that deliveries may be due. Writers need not call it: Add and
// AddIfSubscribed wake it once their transaction has committed.
func (o *Outbox) Wake() {
	if o.worker != nil {
		o.worker.notify()
	}
}

// Add writes one event of the account in tx, a write transaction of Env.Store, with a
// delivery to each destination subscribed to its type, and without one when none is:
// operators read the outbox too (GET /_admin/events).
func (o *Outbox) Add(ctx context.Context, tx store.Tx, accountID, eventType string, principal *api.EventPrincipal, obj any) error {
	destinations, err := subscribedDestinations(ctx, tx, accountID, eventType)
	if err != nil {
		return err
	}
	return o.write(ctx, tx, accountID, eventType, principal, obj, destinations)
}

// AddIfSubscribed writes one event, as Add does, only when a subscription of the account
// names its type: for events so frequent (agents come and go far more often than the API's
// objects change) that one no destination gets would only fill the outbox until retention
// pruned it. Checked in tx, so the subscribed types keep their guarantees (at least once, in
// order).
func (o *Outbox) AddIfSubscribed(ctx context.Context, tx store.Tx, accountID, eventType string, obj any) error {
	destinations, err := subscribedDestinations(ctx, tx, accountID, eventType)
	if err != nil || len(destinations) == 0 {
		return err
	}
	return o.write(ctx, tx, accountID, eventType, nil, obj, destinations)
}

// write writes one event with a delivery to each of destinations, and wakes the worker once
// tx has committed.
func (o *Outbox) write(ctx context.Context, tx store.Tx, accountID, eventType string, principal *api.EventPrincipal, obj any, destinations []string) error {
	object, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	now := o.env.Now()
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
		return err
	}
	deliveries := make([]store.NewDelivery, len(destinations))
	for i, d := range destinations {
		deliveries[i] = store.NewDelivery{ID: ids.New(ids.EventDelivery), DestinationID: d}
	}
	if len(deliveries) > 0 {
		if err := aftercommit.Do(tx, o.Wake); err != nil {
			return err
		}
	}
	return tx.AddEvent(ctx, &store.Event{
		ID: ev.EventID, AccountID: ev.AccountID, Type: ev.EventType, Time: now, Payload: payload,
	}, deliveries)
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
