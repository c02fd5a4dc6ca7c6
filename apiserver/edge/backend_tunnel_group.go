package edge

import (
	"cmp"
	"slices"
)

// tunnelGroupBackend spreads traffic over the online tunnels of its account whose labels
// match: a random one first, the others after it in turn (when a stream cannot be opened
// on one, the next is tried); this replica's tunnels before other replicas'.
type tunnelGroupBackend struct {
	accountID string
	labels    map[string]string
}

func (b *tunnelGroupBackend) plan(p *planner) []upstream {
	tunnels := p.tunnels.Matching(b.accountID, b.labels)
	if len(tunnels) == 0 {
		return nil
	}
	// Sorted first, so that the rotation from a random start spreads evenly whatever order
	// the agent plane lists them in.
	tunnels = slices.SortedFunc(slices.Values(tunnels), func(a, b Tunnel) int { return cmp.Compare(a.ID, b.ID) })
	local := slices.DeleteFunc(slices.Clone(tunnels), func(t Tunnel) bool { return t.Remote })
	remote := slices.DeleteFunc(tunnels, func(t Tunnel) bool { return !t.Remote })
	out := make([]upstream, 0, len(tunnels))
	for _, ts := range [][]Tunnel{local, remote} {
		if len(ts) == 0 {
			continue
		}
		start := p.rand.IntN(len(ts))
		for i := range ts {
			t := ts[(start+i)%len(ts)]
			out = append(out, upstream{tunnel: &t})
		}
	}
	return out
}
