// Package acme obtains and renews the managed certificates of reserved domains. Its ACME
// client (certmagic) keeps its accounts, certificates and locks in Warren's store, so that
// every replica sharing the database shares them and only one of them orders a certificate.
package acme

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Storage is a certmagic.Storage in the store. An item's value sits in the secret column,
// which the store seals (private keys among them); its document holds its key, size and
// time. A lock is a row with an expiry, taken in a write transaction, and kept alive while
// held, so that a replica that dies holding one frees it within LockTTL.
type Storage struct {
	store store.Store
	// LockTTL is how long a lock outlives the last renewal of its holder.
	LockTTL time.Duration
	// LockPoll is how often Lock tries again for a lock held elsewhere.
	LockPoll time.Duration

	mu    sync.Mutex
	held  map[string]heldLock // by lock name
	owner string              // this Storage's mark on the locks it takes
}

type heldLock struct {
	stop chan struct{}
	done chan struct{}
}

// NewStorage returns the storage in s.
func NewStorage(s store.Store) *Storage {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &Storage{store: s, LockTTL: time.Minute, LockPoll: time.Second, held: map[string]heldLock{}, owner: hex.EncodeToString(b[:])}
}

var _ certmagic.Storage = (*Storage)(nil)

// itemDoc is the document of an ACMEItem.
type itemDoc struct {
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// lockDoc is the document of an ACMELock.
type lockDoc struct {
	Name  string    `json:"name"`
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
}

// idOf is the store ID of a key or lock name: a hash, so that any key fits and every replica
// finds it without a lookup.
func idOf(prefix, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + hex.EncodeToString(sum[:16])
}

// Store writes value at key.
func (s *Storage) Store(ctx context.Context, key string, value []byte) error {
	doc, err := json.Marshal(itemDoc{Key: key, Size: int64(len(value)), Modified: time.Now().UTC()})
	if err != nil {
		return err
	}
	obj := &store.Object{Kind: kinds.ACMEItem, ID: idOf(ids.ACMEItem, key), Doc: doc, Secret: value}
	return s.store.Write(ctx, func(tx store.Tx) error {
		_, err := tx.Get(ctx, kinds.ACMEItem, obj.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return tx.Insert(ctx, obj)
		case err != nil:
			return err
		}
		return tx.Update(ctx, obj)
	})
}

// Load returns the value at key, or an error that is fs.ErrNotExist.
func (s *Storage) Load(ctx context.Context, key string) ([]byte, error) {
	var value []byte
	err := s.store.Read(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.ACMEItem, idOf(ids.ACMEItem, key))
		if err != nil {
			return err
		}
		value = o.Secret
		return nil
	})
	return value, notExist(key, err)
}

// notExist turns the store's ErrNotFound into fs.ErrNotExist, which certmagic tests for.
func notExist(key string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("acme storage: %s: %w", key, fs.ErrNotExist)
	}
	return err
}

// Delete removes key and, as a directory, every key under it. A missing key is no error.
func (s *Storage) Delete(ctx context.Context, key string) error {
	return s.store.Write(ctx, func(tx store.Tx) error {
		items, err := s.items(ctx, tx)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Key == key || strings.HasPrefix(it.Key, dirPrefix(key)) {
				if err := tx.Delete(ctx, kinds.ACMEItem, idOf(ids.ACMEItem, it.Key)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// Exists reports whether key is an item or a directory of items.
func (s *Storage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// Stat describes key: an item, or a directory (IsTerminal false) when items lie under it.
func (s *Storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	var info certmagic.KeyInfo
	err := s.store.Read(ctx, func(tx store.Tx) error {
		items, err := s.items(ctx, tx)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Key == key {
				info = certmagic.KeyInfo{Key: key, Modified: it.Modified, Size: it.Size, IsTerminal: true}
				return nil
			}
		}
		for _, it := range items {
			if strings.HasPrefix(it.Key, dirPrefix(key)) {
				info = certmagic.KeyInfo{Key: key}
				return nil
			}
		}
		return store.ErrNotFound
	})
	return info, notExist(key, err)
}

// List returns the keys under prefix: its direct children (items and directories), or with
// recursive every item and directory below it, as certmagic's file storage does.
func (s *Storage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	var items []itemDoc
	err := s.store.Read(ctx, func(tx store.Tx) (err error) {
		items, err = s.items(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, it := range items {
		rest, ok := strings.CutPrefix(it.Key, dirPrefix(prefix))
		if !ok {
			continue
		}
		parts := strings.Split(rest, "/")
		if !recursive {
			parts = parts[:1]
		}
		for i := range parts {
			seen[path.Join(append([]string{prefix}, parts[:i+1]...)...)] = true
		}
	}
	if len(seen) == 0 {
		return nil, notExist(prefix, store.ErrNotFound)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// dirPrefix is what the keys under key as a directory start with ("" for the root).
func dirPrefix(key string) string {
	key = strings.Trim(key, "/")
	if key == "" {
		return ""
	}
	return key + "/"
}

// items are the documents of every stored item: the store has no query by key prefix, and
// the items are few (a handful per domain).
func (s *Storage) items(ctx context.Context, tx store.Tx) ([]itemDoc, error) {
	objs, err := tx.List(ctx, store.ListQuery{Kind: kinds.ACMEItem, AllAccounts: true})
	if err != nil {
		return nil, err
	}
	out := make([]itemDoc, 0, len(objs))
	for _, o := range objs {
		var d itemDoc
		if err := json.Unmarshal(o.Doc, &d); err != nil {
			return nil, fmt.Errorf("acme storage: item %s: %w", o.ID, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Lock takes the lock name, waiting while another holder (in this process or another
// replica) has it and its expiry has not passed, or until ctx ends.
func (s *Storage) Lock(ctx context.Context, name string) error {
	for {
		s.mu.Lock()
		_, busy := s.held[name]
		s.mu.Unlock()
		if !busy {
			taken, err := s.takeLock(ctx, name, false)
			if err != nil {
				// A wait cut short reads as such, not as the transaction it broke off.
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
			if taken {
				s.mu.Lock()
				if _, busy = s.held[name]; !busy {
					h := heldLock{stop: make(chan struct{}), done: make(chan struct{})}
					s.held[name] = h
					s.mu.Unlock()
					go s.keepAlive(name, h)
					return nil
				}
				s.mu.Unlock()
			}
		}
		t := time.NewTimer(s.LockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// takeLock writes this owner's lease on name when the lock is free, expired, or (renew)
// already this owner's, and reports whether it did.
func (s *Storage) takeLock(ctx context.Context, name string, renew bool) (taken bool, err error) {
	id := idOf(ids.ACMELock, name)
	err = s.store.Write(ctx, func(tx store.Tx) error {
		taken = false
		now := time.Now().UTC()
		doc, err := json.Marshal(lockDoc{Name: name, Owner: s.owner, Until: now.Add(s.LockTTL)})
		if err != nil {
			return err
		}
		obj := &store.Object{Kind: kinds.ACMELock, ID: id, Doc: doc}
		o, err := tx.Get(ctx, kinds.ACMELock, id)
		if errors.Is(err, store.ErrNotFound) {
			if renew {
				return nil // released meanwhile: nothing to renew
			}
			taken = true
			return tx.Insert(ctx, obj)
		}
		if err != nil {
			return err
		}
		var cur lockDoc
		// An unreadable lock is as good as expired: nothing renews it in that form.
		if json.Unmarshal(o.Doc, &cur) == nil && now.Before(cur.Until) && (cur.Owner != s.owner || !renew) {
			return nil
		}
		taken = true
		return tx.Update(ctx, obj)
	})
	return taken, err
}

// keepAlive renews a held lock until Unlock stops it.
func (s *Storage) keepAlive(name string, h heldLock) {
	defer close(h.done)
	t := time.NewTicker(s.LockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.LockTTL/3)
			_, _ = s.takeLock(ctx, name, true) // a failure is retried at the next tick
			cancel()
		}
	}
}

// Unlock releases the lock name, which this Storage holds.
func (s *Storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h, ok := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("acme storage: lock %q is not held here", name)
	}
	close(h.stop)
	<-h.done
	id := idOf(ids.ACMELock, name)
	return s.store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.ACMELock, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var cur lockDoc
		if json.Unmarshal(o.Doc, &cur) == nil && cur.Owner != s.owner {
			return nil // it expired and another holder took it: not ours to release
		}
		return tx.Delete(ctx, kinds.ACMELock, id)
	})
}
