// Package aftercommit lets code that runs inside a store write transaction leave work for
// once the transaction has committed: waking a worker that reads what it wrote, closing the
// socket of a session whose row it deleted. Work done before the commit could act on a
// change that then rolls back, or race a reader that cannot see it yet.
package aftercommit

import (
	"context"
	"errors"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// Store runs, after each write transaction that commits, the callbacks registered in it
// with Do, in the order they were registered. A rolled-back transaction runs none; a
// transaction that the store retries runs only those of the attempt that committed.
type Store struct{ store.Store }

func (s Store) Write(ctx context.Context, fn func(store.Tx) error) error {
	var callbacks []func()
	err := s.Store.Write(ctx, func(tx store.Tx) error {
		callbacks = nil // an attempt that failed leaves nothing to run
		return fn(&hookedTx{Tx: tx, callbacks: &callbacks})
	})
	if err != nil {
		return err
	}
	for _, f := range callbacks {
		f()
	}
	return nil
}

// hookedTx is a write transaction of Store.
type hookedTx struct {
	store.Tx
	callbacks *[]func()
}

// ErrNoHooks: Do was given a transaction that is not a write transaction of Store.
var ErrNoHooks = errors.New("aftercommit: not a write transaction of aftercommit.Store")

// Do registers f to run once tx, a write transaction of Store, has committed. It fails with
// ErrNoHooks for any other transaction, rather than let f run never.
func Do(tx store.Tx, f func()) error {
	h, ok := tx.(*hookedTx)
	if !ok {
		return ErrNoHooks
	}
	*h.callbacks = append(*h.callbacks, f)
	return nil
}
