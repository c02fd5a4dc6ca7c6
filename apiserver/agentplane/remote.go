package agentplane

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Tunnels of other replicas. A replica with a cluster link (Options.Link) records the link's
// address in its lease and reads, every RemoteRefresh, the tunnels that the other replicas'
// live sessions hold, with the address of their holder's link: the edge finds them after its
// own, and opens their streams over the link (apiserver/cluster). A tunnel is there at most
// RemoteRefresh after its bind commits, and gone at most RemoteRefresh after its session
// ends (a dead holder's, when its lease is swept).

// DefaultRemoteRefresh is how often the tunnels of other replicas are read.
const DefaultRemoteRefresh = time.Second

// remoteIndex is the tunnels of other replicas as last read; replaced whole, never changed.
type remoteIndex struct {
	byID       map[string]Tunnel
	byEndpoint map[string]string // endpointKey -> tunnel ID
	link       map[string]string // tunnel ID -> the holder's link address
}

type remoteTunnels struct{ cur atomic.Pointer[remoteIndex] }

func (r *remoteTunnels) load() *remoteIndex {
	if x := r.cur.Load(); x != nil {
		return x
	}
	return &remoteIndex{}
}

// refreshRemote reads the tunnels of the other live replicas that have a link.
func (h *Plane) refreshRemote() {
	ctx := h.ctx
	x := &remoteIndex{byID: map[string]Tunnel{}, byEndpoint: map[string]string{}, link: map[string]string{}}
	err := h.store.Read(ctx, func(tx store.Tx) error {
		leases, err := tx.List(ctx, store.ListQuery{Kind: kinds.AgentReplica})
		if err != nil {
			return err
		}
		links := map[string]string{} // replica -> link address
		now := time.Now()
		for _, o := range leases {
			var l leaseDoc
			if o.ID == h.replica || json.Unmarshal(o.Doc, &l) != nil || now.After(l.Until) || l.Link == "" {
				continue
			}
			links[o.ID] = l.Link
		}
		if len(links) == 0 {
			return nil
		}
		sessionLink := map[string]string{} // session ID -> its replica's link address
		for replica, link := range links {
			held, err := tx.Referrers(ctx, replica)
			if err != nil {
				return err
			}
			for _, o := range held {
				if o.Kind == kinds.TunnelSession {
					sessionLink[o.ID] = link
				}
			}
		}
		if len(sessionLink) == 0 {
			return nil
		}
		endpoints, err := tx.List(ctx, store.ListQuery{Kind: kinds.Endpoint, AllAccounts: true, DocsOnly: true})
		if err != nil {
			return err
		}
		hostports := map[string]string{} // tunnel ID -> hostport
		for _, o := range endpoints {
			var ep api.Endpoint
			if json.Unmarshal(o.Doc, &ep) == nil && ep.Tunnel != nil {
				hostports[ep.Tunnel.ID] = ep.Hostport
			}
		}
		tunnels, err := tx.List(ctx, store.ListQuery{Kind: kinds.Tunnel, AllAccounts: true, DocsOnly: true})
		if err != nil {
			return err
		}
		for _, o := range tunnels {
			var t api.Tunnel
			if json.Unmarshal(o.Doc, &t) != nil {
				continue
			}
			link, ok := sessionLink[t.TunnelSession.ID]
			if !ok {
				continue
			}
			rt := Tunnel{ID: t.ID, AccountID: o.AccountID, SessionID: t.TunnelSession.ID, Proto: t.Proto, ForwardsTo: t.ForwardsTo, Labels: maps.Clone(t.Labels), Hostport: hostports[t.ID], Link: link}
			x.byID[rt.ID], x.link[rt.ID] = rt, link
			if rt.Hostport != "" {
				x.byEndpoint[endpointKey(rt.Proto, rt.Hostport)] = rt.ID
			}
		}
		return nil
	})
	if err != nil {
		if h.ctx.Err() == nil {
			h.logStoreError(h.log, "tunnels of other replicas", err)
		}
		return // the last index stays until the store answers again
	}
	h.remote.cur.Store(x)
}

// RemoteLink returns the link address of the replica holding tunnelID, when another replica
// holds it.
func (h *Plane) RemoteLink(tunnelID string) (string, bool) {
	addr, ok := h.remote.load().link[tunnelID]
	return addr, ok
}

// remoteMatching appends to local the tunnels of other replicas that Matching would list,
// after local ones.
func (h *Plane) remoteMatching(local []Tunnel, accountID string, labels map[string]string) []Tunnel {
	x := h.remote.load()
	var more []Tunnel
	for _, t := range x.byID {
		if t.AccountID != accountID || t.Labels == nil || !includes(t.Labels, labels) {
			continue
		}
		if _, here := h.tunnels.get(t.ID); here {
			continue
		}
		t.Labels = maps.Clone(t.Labels)
		more = append(more, t)
	}
	slices.SortFunc(more, func(a, b Tunnel) int { return cmp.Compare(a.ID, b.ID) })
	return append(local, more...)
}

// remoteEndpoint is the tunnel of another replica bound to proto at hostport.
func (h *Plane) remoteEndpoint(proto, hostport string) (Tunnel, bool) {
	x := h.remote.load()
	id, ok := x.byEndpoint[endpointKey(proto, hostport)]
	if !ok {
		return Tunnel{}, false
	}
	t := x.byID[id]
	if t.Proto != proto {
		return Tunnel{}, false
	}
	t.Labels = maps.Clone(t.Labels)
	return t, true
}
