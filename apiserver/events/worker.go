package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/delivery"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// Outcomes of an event's delivery attempt (Env.Delivered).
const (
	OutcomeDelivered = "delivered"
	OutcomeRetried   = "retried" // failed, tried again later
	OutcomeFailed    = "failed"  // failed for good
)

// Sender sends events to a destination's target (delivery.Sender does, through each
// target's real client).
type Sender interface {
	Send(ctx context.Context, target *api.EventTarget, events []delivery.Event) error
}

// Options configure the delivery of events. The zero value delivers with the defaults.
type Options struct {
	// Sender sends the events; nil means a delivery.Sender with Endpoints.
	Sender Sender
	// Endpoints override the targets' endpoints of the default Sender.
	Endpoints delivery.Endpoints
	// Workers is the number of destinations served at once; 0 means 4. A negative value
	// turns delivery off in this process: events are still written, for other replicas.
	Workers int
	// PollInterval is how often an idle worker looks for due deliveries; 0 means 1s.
	PollInterval time.Duration
	// BatchSize caps the events sent to one destination in one call; 0 means 100.
	BatchSize int
	// MinBackoff and MaxBackoff bound the wait before a retry, which doubles with every
	// failed attempt (with jitter); 0 means 1s and 5m.
	MinBackoff, MaxBackoff time.Duration
	// GiveUpAfter is the age at which an undelivered event fails for good; 0 means 24h.
	GiveUpAfter time.Duration
	// Retention is how long delivered and failed events are kept; 0 means 7 days.
	Retention time.Duration
	// Lease is how long a claim holds a destination; a replica that dies holding one gives
	// it up after this. It must exceed a send's duration (bounded to half of it); 0 means 2m.
	Lease time.Duration
}

// Defaults of Options.
const (
	DefaultWorkers     = 4
	DefaultPoll        = time.Second
	DefaultBatch       = 100
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = 5 * time.Minute
	DefaultGiveUpAfter = 24 * time.Hour
	DefaultRetention   = 7 * 24 * time.Hour
	DefaultLease       = 2 * time.Minute
)

// SetDefaults fills in the options left zero.
func (o *Options) SetDefaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatch
	}
	def(&o.PollInterval, DefaultPoll)
	def(&o.MinBackoff, DefaultMinBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.GiveUpAfter, DefaultGiveUpAfter)
	def(&o.Retention, DefaultRetention)
	def(&o.Lease, DefaultLease)
	if o.Sender == nil {
		o.Sender = delivery.New(delivery.Options{Endpoints: o.Endpoints})
	}
}

// Check reports the first option New would misuse.
func (o *Options) Check() error {
	switch {
	case o.PollInterval < 0, o.MinBackoff < 0, o.MaxBackoff < 0, o.GiveUpAfter < 0, o.Retention < 0, o.Lease < 0, o.BatchSize < 0:
		return errors.New("event delivery durations and the batch size must not be negative")
	case o.MinBackoff > o.MaxBackoff && o.MaxBackoff != 0:
		return fmt.Errorf("the event retry backoff %s exceeds its cap %s", o.MinBackoff, o.MaxBackoff)
	}
	return nil
}

// worker sends the outbox's deliveries. Every replica runs one; the store's leases make each
// destination's deliveries go through one of them at a time, in order.
type worker struct {
	opts   Options
	env    Env
	holder string        // this process's name in leases
	wake   chan struct{} // a new event may be due
	stop   context.CancelFunc
	done   chan struct{}
}

// startWorker runs the worker of o until close; holder names this process in leases.
func startWorker(o *Outbox, holder string) *worker {
	ctx, stop := context.WithCancel(context.Background())
	d := &worker{opts: o.opts, env: o.env, holder: holder, stop: stop, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	go d.run(ctx)
	return d
}

// close stops the worker and waits for the sends under way to end.
func (d *worker) close() {
	d.stop()
	<-d.done
}

// notify tells the worker that an event was written.
func (d *worker) notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *worker) run(ctx context.Context) {
	defer close(d.done)
	var sends sync.WaitGroup
	defer sends.Wait()
	free := make(chan struct{}, d.opts.Workers)
	for range d.opts.Workers {
		free <- struct{}{}
	}
	poll := time.NewTicker(d.opts.PollInterval)
	defer poll.Stop()
	nextPrune := time.Time{}
	for {
		if now := d.env.Now(); !now.Before(nextPrune) {
			d.prune(ctx, now)
			nextPrune = now.Add(time.Hour)
		}
		// Claim while a worker is free and something is due.
	claim:
		for {
			select {
			case <-free:
			default:
				break claim
			}
			batch, err := d.env.Store.Claim(ctx, d.holder, d.env.Now(), d.opts.Lease, d.opts.BatchSize)
			if err != nil && ctx.Err() == nil {
				d.env.LogStoreError(d.env.Log, "claiming event deliveries", err)
			}
			if len(batch) == 0 {
				free <- struct{}{}
				break claim
			}
			sends.Go(func() {
				defer func() { free <- struct{}{}; d.notify() }() // a freed worker looks again
				d.send(ctx, batch)
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-poll.C:
		}
	}
}

// send delivers the claimed deliveries of one destination and records the outcome.
func (d *worker) send(ctx context.Context, batch []*store.Delivery) {
	destinationID := batch[0].DestinationID
	target, err := d.target(ctx, destinationID)
	kind := ""
	if err == nil {
		kind = strings.Join(rules.EventTargetKind(target), "")
		events := make([]delivery.Event, len(batch))
		for i, del := range batch {
			e := del.Event
			events[i] = delivery.Event{ID: e.ID, AccountID: e.AccountID, Type: e.Type, Time: e.Time, Payload: e.Payload}
		}
		sendCtx, cancel := context.WithTimeout(ctx, d.opts.Lease/2)
		err = d.opts.Sender.Send(sendCtx, target, events)
		cancel()
	}
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and the batch is sent again
	}
	now := d.env.Now()
	outcomes := make([]store.Outcome, len(batch))
	failed := 0
	for i, del := range batch {
		o := store.Outcome{Seq: del.Seq, State: store.DeliveryDelivered}
		if err != nil {
			o.Error = rules.Clip(err.Error())
			if delivery.IsPermanent(err) || errors.Is(err, errDestinationGone) || now.Sub(del.CreatedAt) >= d.opts.GiveUpAfter {
				o.State = store.DeliveryFailed
				failed++
			} else {
				o.State, o.NextAttempt = store.DeliveryPending, now.Add(d.backoff(del.Attempts+1))
			}
		}
		outcomes[i] = o
	}
	fields := []zap.Field{zap.String("destination_id", destinationID), zap.String("target", kind), zap.Int("events", len(batch))}
	switch {
	case err == nil:
		d.env.Delivered(kind, OutcomeDelivered, len(batch))
		d.env.Log.Debug("events delivered", fields...)
	case failed > 0:
		d.env.Delivered(kind, OutcomeFailed, failed)
		d.env.Delivered(kind, OutcomeRetried, len(batch)-failed)
		d.env.Log.Error("event delivery failed for good", append(fields, zap.Int("failed", failed), zap.String("error", rules.Clip(err.Error())))...)
	default:
		d.env.Delivered(kind, OutcomeRetried, len(batch))
		d.env.Log.Warn("event delivery failed; will retry", append(fields, zap.Int("attempt", batch[0].Attempts+1), zap.String("error", rules.Clip(err.Error())))...)
	}
	if err := d.env.Store.Finish(context.WithoutCancel(ctx), d.holder, now, outcomes); err != nil {
		d.env.LogStoreError(d.env.Log, "recording event deliveries", err, zap.String("destination_id", destinationID))
	}
}

var errDestinationGone = errors.New("the event destination no longer exists")

// target reads a destination's target with its secrets.
func (d *worker) target(ctx context.Context, id string) (*api.EventTarget, error) {
	var target *api.EventTarget
	err := d.env.Store.Read(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.EventDestination, id)
		if errors.Is(err, store.ErrNotFound) {
			return errDestinationGone
		}
		if err != nil {
			return err
		}
		target, err = destinationTarget(o)
		return err
	})
	return target, err
}

// backoff is the wait before attempt n+1 (n ≥ 1): MinBackoff doubled per attempt, capped at
// MaxBackoff, of which a random half is waited ("equal jitter"), so that retries of many
// destinations spread out.
func (d *worker) backoff(attempt int) time.Duration {
	wait := d.opts.MaxBackoff
	if attempt < 40 {
		wait = min(d.opts.MinBackoff<<(attempt-1), d.opts.MaxBackoff)
	}
	half := wait / 2
	return half + rand.N(half+1)
}

// prune deletes the events and deliveries past the retention period.
func (d *worker) prune(ctx context.Context, now time.Time) {
	n, err := d.env.Store.Prune(ctx, now.Add(-d.opts.Retention))
	switch {
	case err != nil && ctx.Err() == nil:
		d.env.LogStoreError(d.env.Log, "pruning old events", err)
	case n > 0:
		d.env.Log.Info("pruned old events", zap.Int64("events", n))
	}
}

// destinationTarget is a stored destination's target with its secrets filled in.
func destinationTarget(o *store.Object) (*api.EventTarget, error) {
	var dest api.EventDestination
	if err := json.Unmarshal(o.Doc, &dest); err != nil {
		return nil, err
	}
	var secret kinds.DestinationSecret
	if len(o.Secret) > 0 {
		if err := json.Unmarshal(o.Secret, &secret); err != nil {
			return nil, err
		}
	}
	for _, f := range secret.Fields(&dest.Target) {
		*f.Wire = *f.Stored
	}
	return &dest.Target, nil
}
