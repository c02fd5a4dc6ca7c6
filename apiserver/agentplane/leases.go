package agentplane

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Replica leases. Each replica keeps a lease object in the store (kind agent_replica, no
// account) that its sessions and the commands it sends refer to, and renews it every
// heartbeat interval. A replica that dies without Close stops renewing it; once it has run
// out, any other replica ends the dead one's sessions, with their tunnels, endpoints and
// stop events, as a disconnect does, then deletes its commands and the lease. Wall-clock
// time is compared across replicas, so their clocks must agree to well within a lease.

// leaseDoc is a lease's document.
type leaseDoc struct {
	Until time.Time `json:"until"`
	// Link is the address of the replica's cluster link (Options.Link); "" without one.
	Link string `json:"link,omitempty"`
	// Agent is the URL at which agents reach the replica directly (Options.Advertise).
	Agent string `json:"agent,omitempty"`
}

// reapBatch bounds the sessions ended in one transaction when a replica is swept.
const reapBatch = 100

// tend is the hub's work of each heartbeat interval: it renews this
// replica's lease, beats its connections and sweeps the replicas whose leases ran out. One
// loop and one store read for all connections, rather than a goroutine and a read each.
func (h *Plane) tend() {
	retaken, err := h.renewLease(h.ctx)
	if retaken {
		h.log.Warn("agent replica lease had run out and was swept: its sessions were ended")
	}
	h.beat()
	if err == nil {
		err = h.sweep()
	}
	if err != nil && h.ctx.Err() == nil {
		h.logStoreError(h.log, "agent replica lease", err)
	}
}

// every runs fn every interval until the hub stops; the hub's loops are all of this shape.
func (h *Plane) every(interval time.Duration, fn func()) {
	defer h.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
		}
		fn()
	}
}

// renewLease extends this replica's lease, or takes it again (taken) if another replica swept it
// (this one was stalled for longer than a lease: its sessions are gone, and their sockets
// close at their next heartbeat).
func (h *Plane) renewLease(ctx context.Context) (taken bool, err error) {
	doc, err := json.Marshal(leaseDoc{Until: time.Now().Add(h.opts.ReplicaLease).UTC(), Link: h.opts.Link, Agent: h.opts.Advertise})
	if err != nil {
		return false, err
	}
	err = h.store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.AgentReplica, h.replica)
		taken = isNotFound(err)
		switch {
		case taken:
			return tx.Insert(ctx, &store.Object{Kind: kinds.AgentReplica, ID: h.replica, Doc: doc})
		case err != nil:
			return err
		}
		o.Doc = doc
		return tx.Update(ctx, o)
	})
	return taken && err == nil, err
}

// beat goes over the connections held here: it closes those whose agent was silent for
// three intervals and those whose session row is gone (their credential was deleted, maybe
// through another replica, or this replica was swept), and sends the others a heartbeat.
func (h *Plane) beat() {
	h.mu.Lock()
	conns := make([]*agentConn, 0, len(h.conns))
	for _, a := range h.conns {
		conns = append(conns, a)
	}
	h.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	// Taken after the connections: each of them registered after its row was committed, so
	// a row missing here is a row deleted.
	held := map[string]bool{}
	err := h.store.Read(h.ctx, func(tx store.Tx) error {
		objs, err := tx.Referrers(h.ctx, h.replica)
		for _, o := range objs {
			held[o.ID] = o.Kind == kinds.TunnelSession
		}
		return err
	})
	if err != nil && h.ctx.Err() == nil {
		h.logStoreError(h.log, "agent sessions check", err)
	}
	every := h.opts.Heartbeat
	for _, a := range conns {
		switch {
		case time.Since(time.Unix(0, a.lastHeard.Load())) > 3*every:
			a.log.Info("agent silent for three heartbeat intervals")
			a.close(websocket.StatusGoingAway, "no heartbeat")
		case err == nil && !held[a.sessionID]:
			a.close(websocket.StatusPolicyViolation, "the session was ended")
		default:
			// Its own goroutine: a slow agent must not hold up the others' heartbeats.
			beat := agentproto.Message{Type: agentproto.TypeHeartbeat, ID: ids.New(""), Replicas: h.Peers()}
			go func() { _ = a.send(beat) }()
		}
	}
}

// sweep ends the sessions of every other replica whose lease has run out, and notes the
// live replicas' agent addresses (Peers).
func (h *Plane) sweep() error {
	ctx := h.ctx
	var leases []*store.Object
	err := h.store.Read(ctx, func(tx store.Tx) (err error) {
		leases, err = tx.List(ctx, store.ListQuery{Kind: kinds.AgentReplica})
		return err
	})
	if err != nil {
		return err
	}
	now := time.Now()
	peers := []agentproto.Replica{}
	for _, o := range leases {
		var l leaseDoc
		if json.Unmarshal(o.Doc, &l) == nil && !now.After(l.Until) && l.Agent != "" {
			peers = append(peers, agentproto.Replica{ID: o.ID, URL: l.Agent})
		}
	}
	slices.SortFunc(peers, func(a, b agentproto.Replica) int { return cmp.Compare(a.ID, b.ID) })
	h.peers.Store(&peers)
	for _, o := range leases {
		if o.ID == h.replica || !leaseExpired(o, now) {
			continue
		}
		h.log.Info("agent replica lease ran out: ending its sessions", zap.String("replica", o.ID))
		if err := h.reapReplica(ctx, o.ID, false); err != nil {
			return err
		}
	}
	return nil
}

func leaseExpired(o *store.Object, now time.Time) bool {
	var l leaseDoc
	// An unreadable lease is as good as expired: nothing renews it in that form.
	return json.Unmarshal(o.Doc, &l) != nil || now.After(l.Until)
}

// reapReplica ends a replica's sessions (as endSession does when a socket closes) and
// deletes the commands it sent, a batch per transaction, then its lease. Unless force (the
// replica's own Close), it stops as soon as the lease turns out to be renewed: that replica
// is alive after all.
func (h *Plane) reapReplica(ctx context.Context, replica string, force bool) error {
	for {
		var done bool
		err := h.store.Write(ctx, func(tx store.Tx) error {
			done = false
			lease, err := tx.Get(ctx, kinds.AgentReplica, replica)
			if isNotFound(err) {
				done = true
				return nil
			}
			if err != nil {
				return err
			}
			if !force && !leaseExpired(lease, time.Now()) {
				done = true
				return nil
			}
			held, err := tx.Referrers(ctx, replica)
			if err != nil {
				return err
			}
			if len(held) == 0 {
				done = true
				return tx.Delete(ctx, kinds.AgentReplica, replica)
			}
			for _, o := range held[:min(len(held), reapBatch)] {
				if o.Kind != kinds.TunnelSession {
					if err := tx.Delete(ctx, o.Kind, o.ID); err != nil {
						return err
					}
					continue
				}
				if err := h.EndSession(ctx, tx, o.ID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}
