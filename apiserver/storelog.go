package apiserver

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// loggedStore logs every transaction at debug level: which kind, how long it took, how many
// times it ran and how it failed, on the logger of the request it serves (so with its
// operation id). Never the objects: their documents and secrets stay out of logs. It also
// records each one's duration and retries in the metrics, and tells the outage tracker of
// each one that succeeds: it sees every transaction, the request's and the background
// loops' alike, and any answer from the store ends an outage.
type loggedStore struct {
	store.Store
	log     *zap.Logger // for calls outside a request, such as the bootstrap
	metrics *metrics
	outage  *outage // a transaction that succeeds ends an outage
}

func (s loggedStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	return s.timed(ctx, "read", func(count func()) error {
		return s.Store.Read(ctx, func(tx store.Tx) error { count(); return fn(tx) })
	})
}

func (s loggedStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	return s.timed(ctx, "write", func(count func()) error {
		return s.Store.Write(ctx, func(tx store.Tx) error { count(); return fn(tx) })
	})
}

// timed runs a transaction of op ("read" or "write").
func (s loggedStore) timed(ctx context.Context, op string, run func(count func()) error) error {
	start, attempts := time.Now(), 0
	err := run(func() { attempts++ })
	took := time.Since(start)
	s.metrics.observeTx(op, took, attempts)
	if err == nil {
		s.outage.answered(start)
	}
	log := s.log
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		log = c.log
	}
	if !log.Core().Enabled(zap.DebugLevel) {
		return err
	}
	fields := []zap.Field{zap.Duration("duration", took), zap.Int("attempts", attempts)}
	if err != nil {
		// An API error's message may quote the request, so only its code.
		if e, known := apierr.From(err); known {
			fields = append(fields, zap.Int("status", e.StatusCode), zap.String("error_code", e.ErrorCode))
		} else {
			fields = append(fields, zap.Error(err))
		}
	}
	log.Debug("store "+op, fields...)
	return err
}
