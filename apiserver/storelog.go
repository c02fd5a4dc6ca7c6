package apiserver

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// loggedStore logs every transaction at debug level: which kind, how long it took, how many
// times it ran and how it failed, on the logger of the request it serves (so with its
// operation id). Never the objects: their documents and secrets stay out of logs.
type loggedStore struct {
	store.Store
	log *zap.Logger // for calls outside a request, such as the bootstrap
}

func (s loggedStore) Read(ctx context.Context, fn func(store.Tx) error) error {
	return s.timed(ctx, "store read", func(count func()) error {
		return s.Store.Read(ctx, func(tx store.Tx) error { count(); return fn(tx) })
	})
}

func (s loggedStore) Write(ctx context.Context, fn func(store.Tx) error) error {
	return s.timed(ctx, "store write", func(count func()) error {
		return s.Store.Write(ctx, func(tx store.Tx) error { count(); return fn(tx) })
	})
}

func (s loggedStore) timed(ctx context.Context, msg string, run func(count func()) error) error {
	log := s.log
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		log = c.log
	}
	if !log.Core().Enabled(zap.DebugLevel) {
		return run(func() {})
	}
	start, attempts := time.Now(), 0
	err := run(func() { attempts++ })
	fields := []zap.Field{zap.Duration("duration", time.Since(start)), zap.Int("attempts", attempts)}
	if err != nil {
		// An API error's message may quote the request, so only its code.
		if e, known := asAPIError(err); known {
			fields = append(fields, zap.Int("status", e.StatusCode), zap.String("error_code", e.ErrorCode))
		} else {
			fields = append(fields, zap.Error(err))
		}
	}
	log.Debug(msg, fields...)
	return err
}
